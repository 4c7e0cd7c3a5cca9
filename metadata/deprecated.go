package metadata

// VtableFromUnmanagedRetainAppdomain is VtableFromUnmanagedRetainAppDomain
// under its former Go name.
//
// Deprecated: use VtableFromUnmanagedRetainAppDomain
// (COR_VTABLE_FROM_UNMANAGED_RETAIN_APPDOMAIN), spelled like AppDomain
// elsewhere.
const VtableFromUnmanagedRetainAppdomain = VtableFromUnmanagedRetainAppDomain
