// Test fixture for ParseErrorHeader: the facility and the helper macros come
// from the file's own definitions, not the built-in ones.

#define FACILITY_URT 0x42
#define SEVERITY_ERROR 1
#define MAKE_HRESULT(sev, fac, code) (((sev) << 31) | ((fac) << 16) | (code) | 0x100)
#define EMAKEHR(val) MAKE_HRESULT(SEVERITY_ERROR, FACILITY_URT, val)

#define FY_E_ONE EMAKEHR(0x0001)
#define FY_E_TWO EMAKEHR(0x0002)
