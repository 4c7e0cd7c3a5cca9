// Base Win32/PAL types used by the CoreCLR profiling ABI on Linux x64.
// Written for clrprof from the ABI facts: LP64, WCHAR is 2 bytes, no
// __stdcall, GUID is {uint32, uint16, uint16, uint8[8]}.
#ifndef CLRPROF_COMTYPES_H
#define CLRPROF_COMTYPES_H

#include <stdint.h>
#include <stddef.h>

#define STDMETHODCALLTYPE
#define __stdcall

typedef int32_t HRESULT;
typedef int32_t BOOL;
typedef int32_t LONG;
typedef int32_t INT;
typedef int32_t INT32;
typedef int32_t LONG32;
typedef uint32_t ULONG;
typedef uint32_t DWORD;
typedef uint32_t UINT;
typedef uint32_t UINT32;
typedef uint32_t ULONG32;
typedef int64_t LONGLONG;
typedef int64_t INT64;
typedef uint64_t ULONGLONG;
typedef uint64_t UINT64;
typedef uint64_t ULONG64;
typedef uint16_t USHORT;
typedef uint16_t WORD;
typedef int16_t SHORT;
typedef uint8_t BYTE;
typedef uint8_t UINT8;
typedef uint8_t UCHAR;
typedef int8_t CHAR;
typedef uintptr_t UINT_PTR;
typedef intptr_t INT_PTR;
typedef uintptr_t ULONG_PTR;
typedef intptr_t LONG_PTR;
typedef uintptr_t SIZE_T;
typedef intptr_t SSIZE_T;
typedef uint16_t WCHAR;
typedef WCHAR *LPWSTR;
typedef const WCHAR *LPCWSTR;
typedef char *LPSTR;
typedef const char *LPCSTR;
typedef void *LPVOID;
typedef void *PVOID;
typedef const void *LPCVOID;
typedef void *HANDLE;
typedef void *HMODULE;
typedef const BYTE *LPCBYTE;
typedef BYTE *LPBYTE;

typedef struct GUID {
    uint32_t Data1;
    uint16_t Data2;
    uint16_t Data3;
    uint8_t Data4[8];
} GUID;
typedef GUID IID;
typedef GUID CLSID;
typedef const GUID *REFGUID;
typedef const GUID *REFIID;
typedef const GUID *REFCLSID;
typedef const GUID *LPCGUID;

typedef struct IUnknown IUnknown;
typedef struct IUnknownVtbl {
    HRESULT (STDMETHODCALLTYPE *QueryInterface)(IUnknown *self, REFIID riid, void **ppv);
    ULONG (STDMETHODCALLTYPE *AddRef)(IUnknown *self);
    ULONG (STDMETHODCALLTYPE *Release)(IUnknown *self);
} IUnknownVtbl;
struct IUnknown {
    const IUnknownVtbl *lpVtbl;
};

typedef struct IClassFactory IClassFactory;
typedef struct IClassFactoryVtbl {
    HRESULT (STDMETHODCALLTYPE *QueryInterface)(IClassFactory *self, REFIID riid, void **ppv);
    ULONG (STDMETHODCALLTYPE *AddRef)(IClassFactory *self);
    ULONG (STDMETHODCALLTYPE *Release)(IClassFactory *self);
    HRESULT (STDMETHODCALLTYPE *CreateInstance)(IClassFactory *self, IUnknown *outer, REFIID riid, void **ppv);
    HRESULT (STDMETHODCALLTYPE *LockServer)(IClassFactory *self, BOOL lock);
} IClassFactoryVtbl;
struct IClassFactory {
    const IClassFactoryVtbl *lpVtbl;
};

// Interfaces and types that the metadata interfaces only pass by pointer.
typedef struct IStream IStream;
typedef struct ITypeInfo ITypeInfo;
typedef struct VARIANT VARIANT;

#define S_OK ((HRESULT)0)
#define S_FALSE ((HRESULT)1)
#define E_NOTIMPL ((HRESULT)0x80004001)
#define E_NOINTERFACE ((HRESULT)0x80004002)
#define E_POINTER ((HRESULT)0x80004003)
#define E_FAIL ((HRESULT)0x80004005)
#define E_UNEXPECTED ((HRESULT)0x8000FFFF)
#define E_OUTOFMEMORY ((HRESULT)0x8007000E)
#define E_INVALIDARG ((HRESULT)0x80070057)
#define CLASS_E_NOAGGREGATION ((HRESULT)0x80040110)
#define CLASS_E_CLASSNOTAVAILABLE ((HRESULT)0x80040111)

#endif
