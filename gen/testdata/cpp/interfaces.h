// Test fixture for ParseCppHeader: COM interface macros, GUIDs, SAL
// annotations and C++ that the parser must skip.

#ifndef FIXTURE_INTERFACES_H
#define FIXTURE_INTERFACES_H

#include <unknwn.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FIXTURE_VERSION 3
#define FIXTURE_NAME    "fixture"
#define FIXTURE_NAME_W  W("fixture")
#define INTERFACE_MARKER IRoot

// {00112233-4455-6677-8899-AABBCCDDEEFF}
EXTERN_GUID(IID_IRoot, 0x00112233, 0x4455, 0x6677, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff);

// {F00DCAFE-0001-0002-0304-050607080910}
DEFINE_GUID(IID_ISample, 0xf00dcafe, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0x10);

EXTERN_GUID(CLSID_Sample, 0xdeadbeef, 0xbeef, 0xfeed, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef)

interface ISample;
typedef void *HCORENUM;
typedef UNALIGNED void const *PCVOID_UNALIGNED;

#undef  INTERFACE
#define INTERFACE IRoot
DECLARE_INTERFACE(IRoot)
{
    STDMETHOD_(ULONG, AddRef)(THIS) PURE;
    STDMETHOD(Ping)(void) PURE;
};

DECLARE_INTERFACE_(ISample, IRoot)
{
    BEGIN_INTERFACE
    STDMETHOD_(void, CloseEnum)(HCORENUM hEnum) PURE;
    STDMETHOD(Enum)(HCORENUM *phEnum, mdTypeDef rTypeDefs[], ULONG cMax, ULONG *pcTypeDefs) PURE;
    STDMETHOD(Unnamed)(ULONG, const WCHAR *, IUnknown **) PURE;
    STDMETHOD (Spaced) (
        const void  *pbBlob,                // [IN] comments are dropped
        ULONG       cbBlob,
        void const  **ppvOut,
        const char **ppName,
        IUnknown    *pUnk,
        REFIID      riid,
        mdToken     rTokens[4]) PURE;
    STDMETHOD(Defaults)(ULONG align = 1, void **ppBytes=0, DWORD flags = (1 << 2) | 1) PURE;
    STDMETHOD_(const char *, Name)() PURE;
    END_INTERFACE
};

DECLARE_INTERFACE_(ISal, ISample)
{
    STDMETHOD(Sal2)(
        _In_ LPWSTR szIn,
        _In_opt_ IUnknown *pOptional,
        _Out_ ULONG *pOut,
        _Out_opt_ LPWSTR *pszOptOut,
        _Inout_ ULONG *pInOut,
        _Inout_opt_ ULONG *pInOutOpt,
        _In_reads_(cElems) const mdToken *rElems,
        ULONG cElems,
        _In_reads_bytes_(cbData) const BYTE *pbData,
        ULONG cbData) PURE;

    STDMETHOD(Sal2Buffers)(
        _Out_writes_(cMax) mdToken *rOut,
        ULONG cMax,
      _Out_writes_to_(cchName, *pchName)
        LPWSTR szName,
        ULONG cchName,
        ULONG *pchName,
      _Out_writes_to_opt_(cchOpt, *pchOpt) LPWSTR szOpt,
        ULONG cchOpt,
        ULONG *pchOpt,
        _Out_writes_bytes_to_opt_(cbBuf, *pcbBuf) BYTE *pBuf,
        ULONG cbBuf,
        ULONG *pcbBuf,
        _Out_writes_all_(4) DWORD *rdw) PURE;

    STDMETHOD(Sal2Pointers)(
        _Outptr_ IUnknown **ppOut,
        _Outptr_opt_result_maybenull_ IUnknown **ppMaybe,
        _Deref_out_ BYTE **ppb,
        _Deref_out_range_(0, 10) ULONG *pRanged,
        _In_range_(1, 64) ULONG width,
        _Pre_notnull_ _Out_ ULONG *pStacked) PURE;

    STDMETHOD(Sal1)(
        __in LPCWSTR szName,
        __in_ecount(cIn) const ULONG *rgIn,
        ULONG cIn,
        __out_ecount_part_opt(cchBuf, *pcchBuf) WCHAR *szBuf,
        ULONG cchBuf,
        ULONG *pcchBuf,
        __deref_out_ecount(*pcOut) ULONG **prgOut,
        ULONG *pcOut,
        __inout_opt void *pCtx,
        __out_bcount(cb) BYTE *pb,
        DWORD cb) PURE;
};

DECLARE_INTERFACE_IID_(IWithIID, IUnknown, "{0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9}")
{
    STDMETHOD(Only)(int x) PURE;
};

DECLARE_INTERFACE_(INoIID, IUnknown)
{
    STDMETHOD(Nothing)() PURE;
};

typedef enum
{
    cmNone   = 0,
    cmFirst,
    cmSecond = 0x10,
    cmBoth   = cmFirst | cmSecond,
    cmLast,
} CorFixtureMode;

typedef enum tagUnknowable {
    ukA = SOME_WINDOWS_CONSTANT,
    ukB
} Unknowable;

typedef struct
{
    DWORD       dwA;
    LPWSTR      szB;
    ULONG       rgC[8];
    const void *pD;
} FIXTURE_STRUCT, *PFIXTURE_STRUCT;

typedef union {
    USHORT highAdj;
    ULONG  full;
} FixtureUnion;

typedef GUID FIXTURE_ID;
typedef HRESULT (STDMETHODCALLTYPE *FixtureCallback)(_In_ void *pCtx, ULONG cb);

#ifdef __cplusplus
}

// C++ only: all of this is skipped.
FORCEINLINE int FixtureInline(CorFixtureMode m)
{
    if (m == cmFirst) { return 1; }
    static const int table[] = { 1, 2, 3 };
    return table[m & 1];
}

inline ULONG FixtureRef(PCCOR_SIGNATURE & pData) // a reference parameter
{
    return *pData++;
}

class FixtureClass : public IUnknown
{
public:
    FixtureClass() : m_ref(0) {}
    virtual ULONG STDMETHODCALLTYPE AddRef() { return ++m_ref; }
private:
    ULONG m_ref;
};

template <typename T>
struct FixtureHolder
{
    T value;
    T get() const { return value; }
};

struct FixturePlain
{
    int a;
    int b : 4;
};

namespace fixture
{
    enum { nsA = 7, nsB };
    int Helper(int x);
}

enum {
    SIGN_ONE = 0xffffffc0,
    SIGN_TWO = 0xffffe000,
};
#endif // __cplusplus

#if 0
this is not C at all { {
#endif

#endif // FIXTURE_INTERFACES_H
