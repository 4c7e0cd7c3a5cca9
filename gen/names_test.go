package gen

import "testing"

func TestNames(t *testing.T) {
	for _, c := range []struct {
		f        func(string) string
		in, want string
	}{
		{ExportedName, "COR_PRF_MONITOR_JIT_COMPILATION", "CorPrfMonitorJITCompilation"},
		{TypeName, "COR_PRF_MONITOR", "Monitor"},
		{TypeName, "COR_PRF_GC_ROOT_KIND", "GCRootKind"},
		{TypeName, "CorElementType", "ElementType"},
		{TypeName, "COR_PRF_CODEGEN_FLAGS", "CodegenFlags"},
		{LocalName, "functionId", "functionID"},
		{LocalName, "fIsSafeToBlock", "fIsSafeToBlock"},
		{ParamName, "fIsSafeToBlock", "isSafeToBlock"},
		{ParamName, "szName", "name"},
		{ParamName, "dwMethodFlags", "methodFlags"},
		{ParamName, "type", "typ"},
		{ParamName, "functionId", "functionID"},
		{ParamName, "rejitId", "rejitID"},
		{ParamName, "pIDs", "ids"},
		{ParamName, "cbILHeader", "ilHeader"},
		{TypeName, "ReJITID", "ReJITID"},
		{TypeName, "COR_PRF_MONITOR_ENTERLEAVE", "MonitorEnterLeave"},
		{TypeName, "COR_PRF_NONGC_HEAP_RANGE", "NonGCHeapRange"},
		{TypeName, "COR_PRF_EVENTPIPE_LEVEL", "EventPipeLevel"},
		{TypeName, "COR_PRF_EVENTPIPE_LOGALWAYS", "EventPipeLogAlways"},
		{UnexportedName, "EventData", "eventData"},
		{UnexportedName, "OSInfo", "osInfo"},
		{UnexportedName, "ID", "id"},
		{UnexportedName, "X", "x"},
		{LocalName, "type", "type_"},
		{LocalName, "pICorProfilerInfoUnk", "pICorProfilerInfoUnk"},
		{ResultName, "pClassId", "ClassID"},
		{ResultName, "pdwTypeDefFlags", "TypeDefFlags"},
		{ResultName, "ppMethodHeader", "MethodHeader"},
		{ResultName, "szName", "Name"},
		{ResultName, "pbHookFunction", "HookFunction"},
		{ResultName, "ptkExtends", "Extends"},
		{ResultName, "typeArgs", "TypeArgs"},
		{ExportedName, "JITCompilationStarted", "JITCompilationStarted"},
		{ExportedName, "GetILFunctionBody", "GetILFunctionBody"},
		{ExportedName, "ReJITCompilationStarted", "ReJITCompilationStarted"},
		{InterfaceGoName, "ICorProfilerFunctionControl", "FunctionControl"},
		// One scheme for enum values: the high mask's values are High +
		// what they turn on; cor.h's lower-case prefixes are words.
		{TypeName, "COR_PRF_HIGH_MONITOR_LARGEOBJECT_ALLOCATED", "HighLargeObjectAllocated"},
		{TypeName, "COR_PRF_HIGH_BASIC_GC", "HighBasicGC"},
		{TypeName, "COR_PRF_HIGH_MONITOR", "HighMonitor"},
		{TypeName, "mdPublic", "MdPublic"},
		{TypeName, "tdPublic", "TdPublic"},
		{TypeName, "MDDupDefault", "MDDupDefault"},
		{TypeName, "peILonly", "PEILonly"},
		{ResultName, "pmvid", "MVID"},
		{ResultName, "usMajorVersion", "MajorVersion"},
		{InterfaceGoName, "IMetaDataImport2", "Import2"},
	} {
		if got := c.f(c.in); got != c.want {
			t.Errorf("%s → %s, want %s", c.in, got, c.want)
		}
	}
}
