package profiler

// Names kept so that code written against older clrprof versions still
// compiles. Each says what replaced it.

// MonitorMonitorAll is COR_PRF_ALL under its former Go name.
//
// Deprecated: use MonitorAllFlags (COR_PRF_ALL, every flag SetEventMask
// accepts). It is not MonitorAll, which is COR_PRF_MONITOR_ALL (every flag
// that asks for callbacks).
const MonitorMonitorAll = MonitorAllFlags

// MonitorAppdomainLoads is MonitorAppDomainLoads under its former Go name.
//
// Deprecated: use MonitorAppDomainLoads (COR_PRF_MONITOR_APPDOMAIN_LOADS),
// spelled like AppDomainID.
const MonitorAppdomainLoads = MonitorAppDomainLoads

// SuspendForAppdomainShutdown is SuspendForAppDomainShutdown under its
// former Go name.
//
// Deprecated: use SuspendForAppDomainShutdown
// (COR_PRF_SUSPEND_FOR_APPDOMAIN_SHUTDOWN).
const SuspendForAppdomainShutdown = SuspendForAppDomainShutdown
