// Test fixture for ParseConstHeader: enums, #define constants, typedefs and
// structs in the style of corhdr.h.

#ifndef FIXTURE_ENUMS_H
#define FIXTURE_ENUMS_H

#include <stdint.h>

typedef uint32_t fxToken;
typedef fxToken fxTypeDef, *pfxTypeDef;
typedef unsigned __int8 FX_BYTE;
typedef const FX_BYTE* PCFX_BYTE;
typedef void *HFXENUM;

#define FX_SHIFT        4
#define FX_BASE         (1 << FX_SHIFT)
#define FX_MASK         ((FX_BASE << 8) - 1)
#define FX_CAST         ((ULONG)0x80000000)
#define FX_LONG         0x7fffffffL
#define FX_NEG          (-2)
#define FX_TERNARY      (FX_SHIFT > 2 ? 10 : 20)
#define FX_CHAR         'A'
#define FX_NAME         "fixture"
#define FX_NAME_W       W("fixture")
#define FX_NAME_L       L"wide"
#define FX_JOINED       "con" "cat"
#define FX_ESCAPED      "a\\b\"c\x41\101\n"
#define FX_NOT_A_CONST  SomeFunction(1)
#define FX_TYPE         unsigned long
#define FX_EMPTY
#define FxMake(hi, lo)  (((hi) << 16) | (lo))
#define FX_MADE         FxMake(2, 3)

#ifdef FX_UNDEFINED
#define FX_BRANCH 1
#else
#define FX_BRANCH 2
#endif

typedef enum FxKind
{
    fkNone,
    fkOne,
    fkTwo,
    fkTen       = 10,
    fkEleven,
    fkMask      = 0x00f0,
    fkShifted   = 1 << FX_SHIFT,
    fkCombined  = fkOne | fkTwo | fkShifted,
    fkFromDef   = FX_BASE + 1,
    fkNext,
    fkNegative  = -1,
    fkAfterNeg,
    fkInverted  = ~fkMask,
} FxKind;

typedef enum FxTokenType
{
    fxtModule   = 0x00000000,
    fxtTypeDef  = 0x02000000,
    fxtOther    = fxtTypeDef + fkTen,
    fxtCast     = (fxToken)0x70000000,
    fxtMacro    = FxMake(fkOne, 5),
} FxTokenType;

typedef enum FxTagged {
    ftA = fkEleven,
} FxUntagName;

typedef enum FxBased : unsigned {
    fbZero,
    fbOne,
} FxBased;

typedef enum {
    fuBad = IMAGE_SCN_MEM_READ | 1,
} FxUnknowable;

enum
{
    FX_ANON_A = 3,
    FX_ANON_B,
};

#define fxTypeDefNil    ((fxTypeDef)fxtTypeDef)
#define fxOtherNil      ((fxToken)fxtOther)
#define FX_AFTER_ENUM   (fkTen * 2)

typedef struct FxHeader
{
    uint32_t        cb;
    uint16_t        Major, Minor;
    union {
        uint32_t    EntryPointToken;
        uint32_t    EntryPointRVA;
    };
    struct {
        unsigned    Kind : 8;
        unsigned    Size : 24;
    } Packed;
    FxKind          Flags : 16;
    const void     *pData;
    fxToken         Tokens[FX_SHIFT];
    uint8_t         Tail[];
} FxHeader, *PFxHeader;

typedef union FxEither
{
    FxHeader    Header;
    uint64_t    Raw;
} FxEither;

typedef struct FxWithMethods
{
    int x;
    int Get() const { return x; }
} FxWithMethods;

#endif // FIXTURE_ENUMS_H
