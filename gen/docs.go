package gen

// methodDocs are the first lines of the docs of the methods a profiler
// author uses most, in the project's words (the generated line that names
// the COM method follows). Keyed by "Interface.Method".
var methodDocs = map[string]string{
	"ICorProfilerInfo2.GetFunctionInfo2": `GetFunctionInfo2 says which function a FunctionID is: its class, module,
MethodDef token and the type arguments of a generic method. For code
shared by several instantiations the runtime names the class only with
the frame info of an ELT hook (frameInfo 0 gives ClassID 0 for a shared
generic class); FunctionName and FunctionFullName format all this.`,
	"ICorProfilerInfo2.GetClassIDInfo2": `GetClassIDInfo2 says which class a ClassID is: its module, TypeDef
token, parent class and type arguments. Arrays have no TypeDef: ask
IsArrayClass first (ClassName does both).`,
	"ICorProfilerInfo.GetModuleMetaData": `GetModuleMetaData opens a module's metadata as the interface iid
(metadata.IIDImport2, ...). ModuleImport and ModuleEmit return the typed
readers and writers; prefer them.`,
	"ICorProfilerInfo.GetTokenAndMetaDataFromFunction": `GetTokenAndMetaDataFromFunction returns a function's MethodDef token and
its module's metadata as the interface iid; FunctionImport returns the
typed reader.`,
	"ICorProfilerInfo.GetFunctionFromIP": `GetFunctionFromIP returns the managed function whose native code holds
the instruction pointer ip; an error for an address outside managed code.`,
	"ICorProfilerInfo.GetCurrentThreadID": `GetCurrentThreadID returns the runtime's ID of the calling thread; an
error on a thread the runtime does not know (a goroutine's thread that
never ran managed code).`,
	"ICorProfilerInfo.GetClassFromObject": `GetClassFromObject returns the class of an object; valid while the
object does not move (inside the callback that reported it).`,
	"ICorProfilerInfo.GetEventMask": `GetEventMask returns the events the runtime reports to this profiler
(SetEventMask's low half).`,
	"ICorProfilerInfo4.GetObjectSize2": `GetObjectSize2 returns an object's size in bytes, arrays and strings
included.`,
	"ICorProfilerInfo2.GetCodeInfo2": `GetCodeInfo2 returns the native code ranges of a function's current
body (hot and cold parts).`,
	"ICorProfilerInfo.GetILFunctionBody": `GetILFunctionBody returns a copy of a method's IL, header included: the
body its first JIT compiles (the metadata's, or one installed with
SetILFunctionBody; never a ReJIT body). ilrw.Decode reads it.`,
	"ICorProfilerInfo.GetFunctionFromToken": `GetFunctionFromToken returns the FunctionID of a non-generic method
once the runtime has created it; generic methods need
GetFunctionFromTokenAndTypeArgs.`,
	"ICorProfilerInfo.GetClassFromToken": `GetClassFromToken returns the ClassID of a loaded non-generic TypeDef;
generic types need GetClassFromTokenAndTypeArgs (which loads the
instantiation if needed).`,
	"ICorProfilerInfo.GetAssemblyInfo": `GetAssemblyInfo returns an assembly's name, app domain and manifest
module.`,
	"ICorProfilerInfo4.GetRuntimeInformation": `GetRuntimeInformation says which runtime this is: its type (CoreCLR),
version numbers and build.`,
	"IMetaDataImport.FindTypeDefByName": `FindTypeDefByName finds a TypeDef by its namespace-qualified name
("System.String"), nested in enclosingClass (0 for a top-level type); the
error matches ErrNotFound when there is none.`,
	"IMetaDataImport.FindMethod": `FindMethod finds a method of td by name and, unless sigBlob is empty,
signature; the error matches ErrNotFound when there is none.`,
	"IMetaDataImport.FindMemberRef": `FindMemberRef finds the MemberRef of name and, unless sigBlob is empty,
signature on parent td; Emit2.EnsureMemberRef finds or defines one.`,
	"IMetaDataImport.FindTypeRef": `FindTypeRef finds the TypeRef to a namespace-qualified name in a
resolution scope; Emit2.EnsureTypeRef finds or defines one.`,
	"IMetaDataImport.GetUserString": `GetUserString returns the string an ldstr token names.`,
	"IMetaDataImport.GetScopeProps": `GetScopeProps returns the module's name and MVID.`,
	"IMetaDataEmit.DefineMemberRef": `DefineMemberRef defines a reference to a method or field of another
type (a TypeRef, TypeSpec or ModuleRef) with its signature blob, without
looking for an existing one (Emit2.EnsureMemberRef does).`,
	"IMetaDataEmit.GetTokenFromSig": `GetTokenFromSig returns the StandAloneSig token of a signature blob (a
local-variable or call-site signature), defining it if needed.`,
	"IMetaDataEmit.DefineTypeRefByName": `DefineTypeRefByName defines a TypeRef to a namespace-qualified name in a
resolution scope (an AssemblyRef, a ModuleRef, or the TypeRef of the
enclosing type).`,
	"IMetaDataEmit.DefineUserString": `DefineUserString defines a string for ldstr and returns its token.`,
}

// docFor returns the project's doc of a method followed by line, or line.
func docFor(iface, method, line string) string {
	if d, ok := methodDocs[iface+"."+method]; ok {
		return d + "\n\n" + line
	}
	return line
}
