package conformance

import "strings"

// exceptionsSequence is the order in which upstream's exception test expects
// the callbacks for one exception thrown from a nested finally of Thrower
// and caught behind a filter in Catcher: the search pass visits each frame
// once (no events for the finally funclets), runs the filter, finds the
// catcher, then the unwind pass leaves Thrower and enters the catch block.
var exceptionsSequence = strings.Join([]string{
	"ExceptionThrown",
	"ExceptionSearchFunctionEnter: Thrower",
	"ExceptionSearchFunctionLeave",
	"ExceptionSearchFunctionEnter: Catcher",
	"ExceptionSearchFilterEnter: Catcher",
	"ExceptionSearchFilterLeave",
	"ExceptionSearchCatcherFound: Catcher",
	"ExceptionSearchFunctionLeave",
	"ExceptionUnwindFunctionEnter: Thrower",
	"ExceptionUnwindFunctionLeave",
	"ExceptionUnwindFunctionEnter: Catcher",
	"ExceptionCatcherEnter: Catcher",
	"ExceptionCatcherLeave",
}, "\n")

func init() {
	register(&scenario{
		Name:          "exceptions",
		Upstream:      "exception/ExceptionTest.cs, native/exceptionprofiler",
		UpstreamLines: 212,
		CLSID:         "{5E0E5A51-3C1B-4A7E-9D0B-1F6A8C2E4B01}",
		Env:           []string{"EXCEPTIONS_EXPECTED=" + exceptionsSequence},
	})
}
