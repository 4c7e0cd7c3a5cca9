// Package metadata reads and writes the ECMA-335 metadata of loaded modules
// through the runtime's IMetaDataImport/Emit interfaces: tokens, their
// properties and signatures.
//
// # Wrappers
//
// The generated wrappers (Import, Import2, Emit, Emit2, AssemblyImport, ...)
// mirror the COM interfaces method for method. On top of them, [Import2]
// has the calls an author uses daily, returning whole enumerations as slices
// and properties as structs: TypeDefs, Methods, Fields, Properties, Events,
// Params, MemberRefs, AllMemberRefs, TypeSpecs, AllMethodSpecs,
// Signatures, GenericParams, CustomAttributes; TypeDef, TypeRef, Method,
// Field, Property, Event, Param, MemberRef, MethodSpec, TypeSpec,
// StandAloneSig, GenericParam, CustomAttribute, UserString. [AssemblyImport]
// has Assembly, AssemblyRef(s) and ExportedType(s); [Emit2] has
// DefineMemberRef, DefineMethodSpec, GetTokenFromSig, GetTokenFromTypeSpec,
// DefineUserString and DefineTypeRef, which take blobs and strings;
// EnsureAssemblyRef, EnsureTypeRef and EnsureMemberRef reuse a module's
// references to another assembly or define them; DefineTypeDef, DefineField,
// DefineProperty, DefineEvent, DefineParam and SaveToMemory build new
// metadata (Go slices for the token lists, a [Constant] for default
// values). [DispenserEx.OpenImport] opens any assembly file by path (the
// runtime's dispenser: profiler.MetaDataDispenser).
//
// # Signatures
//
// [ParseSignature], [ParseMethodSig], [ParseFieldSig], [ParseLocalVarSig],
// [ParseMethodSpec] and [ParseTypeSpec] decode the blobs of ECMA-335
// II.23.2 into a tree of [Type] nodes; each result's Encode gives the blob
// back, byte for byte for everything a compiler writes (the integration
// tests check every signature of every module the runtimes load). Custom
// modifiers and PINNED are prefix nodes, so their order survives. Decoding
// never panics: a malformed blob gives a [*SigError] with the byte offset
// (errors.Is with ErrSigTruncated, ErrSigMalformed or ErrSigLimit);
// nesting is capped at [MaxSigDepth], counts at [MaxSigCount], array ranks
// at [MaxArrayRank]. A decoded signature takes a few allocations (its
// nodes share one); a loop that looks at one signature at a time and keeps
// none can decode through a [SigDecoder], which reuses its memory from one
// signature to the next. The compressed-integer and coded-token helpers
// (AppendCompressed, ReadCompressed, AppendCompressedSigned,
// AppendTypeDefOrRef, ...) are exported for IL rewriters.
//
// # Names
//
// [Import2.MethodName], [Import2.TypeName], [Import2.FieldName] and
// [Import2.FormatType] format names from tokens and signatures:
//
//	Namespace.Outer<T>+Nested<U>.Method<V>(T, U, V, string[])
//	Meta.Test.Outer<int>+Nested<string>.Pair<float>(int32, string, float32, string[])
//
// The instantiation of the named type and method uses C# keywords (int,
// string, float); types inside the parameter list use ILAsm's names (int32,
// string, float32, native int), with the instantiation's arguments
// substituted. Names from runtime IDs (FunctionID, ClassID) are in package
// profiler (Info.FunctionFullName), which uses the same format.
package metadata
