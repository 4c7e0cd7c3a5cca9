package metadata

// IMetaDataTables calls whose outputs are pointers into the runtime's
// copy of the metadata (names, strings, GUIDs, token lists), copied into
// Go values; and the dispenser's options, which travel in a VARIANT.

import (
	"fmt"
	"unsafe"

	"github.com/clrprof/clrprof/internal/cgoutil"
	com "github.com/clrprof/clrprof/internal/com"
	"github.com/google/uuid"
)

/*
#include <stdint.h>
#include <string.h>
#include "thunks_gen.h"

// The PAL's VARIANT: the type tag, three reserved words, then the value.
typedef struct {
	uint16_t vt, r1, r2, r3;
	union { uint64_t u8; uint32_t u4; void *p[2]; } v;
} clrprof_variant;

enum { clrprof_VT_UI4 = 19 };

static HRESULT clrprof_dispenser_set_ui4(IMetaDataDispenserEx *d, const void *id, uint32_t value) {
	clrprof_variant var;
	memset(&var, 0, sizeof var);
	var.vt = clrprof_VT_UI4;
	var.v.u4 = value;
	return clrprof_IMetaDataDispenserEx_SetOption(d, (REFGUID)id, (const VARIANT *)&var);
}

static HRESULT clrprof_dispenser_get_ui4(IMetaDataDispenserEx *d, const void *id, uint32_t *value, uint16_t *vt) {
	clrprof_variant var;
	memset(&var, 0, sizeof var);
	HRESULT hr = clrprof_IMetaDataDispenserEx_GetOption(d, (REFGUID)id, (VARIANT *)&var);
	*vt = var.vt;
	*value = var.v.u4;
	return hr;
}
*/
import "C"

func nilTables() error { return com.NilObject("IMetaDataTables") }

// maxTableString bounds the strings copied from the metadata heaps.
const maxTableString = 1 << 20

func cString(p *C.char) string {
	if p == nil {
		return ""
	}
	return C.GoStringN(p, C.int(C.strnlen(p, maxTableString)))
}

// TableInfo describes one metadata table ([Tables.TableInfo]).
type TableInfo struct {
	// Name is the table's name ("TypeDef", ...).
	Name    string
	RowSize uint32 // bytes
	// Rows is the number of rows.
	Rows uint32
	// Columns is the number of columns (ColumnInfo describes each).
	Columns   uint32
	KeyColumn uint32 // the sorted column, or ^uint32(0)
}

// TableInfo returns the size and name of table ix (0 Module, 1 TypeRef,
// ... up to GetNumTables).
func (x *Tables) TableInfo(ix uint32) (TableInfo, error) {
	if x == nil || x.p == nil {
		return TableInfo{}, nilTables()
	}
	var name *C.char
	r, err := x.getTableInfo(ix, unsafe.Pointer(&name))
	if err != nil {
		return TableInfo{}, err
	}
	return TableInfo{Name: cString(name), RowSize: r.Row, Rows: r.Rows, Columns: r.Cols, KeyColumn: r.Key}, nil
}

// ColumnInfo describes one column of a metadata table.
type ColumnInfo struct {
	// Name is the column's name as the runtime's schema spells it.
	Name   string
	Offset uint32 // in the row, in bytes
	Size   uint32 // bytes
	// Type is the column's type code (below 64 a table index, 64-95
	// a coded token, then the fixed types and heap indexes; see the
	// runtime's metamodelpub.h).
	Type uint32
}

// ColumnInfo returns the layout and name of column col of table ix.
func (x *Tables) ColumnInfo(ix, col uint32) (ColumnInfo, error) {
	if x == nil || x.p == nil {
		return ColumnInfo{}, nilTables()
	}
	var name *C.char
	r, err := x.getColumnInfo(ix, col, unsafe.Pointer(&name))
	if err != nil {
		return ColumnInfo{}, err
	}
	return ColumnInfo{Name: cString(name), Offset: r.PoCol, Size: r.Col, Type: r.Type}, nil
}

// CodedTokenInfo returns the name of coded-token kind ix and the token
// types it can hold, in the order of their tag values.
func (x *Tables) CodedTokenInfo(ix uint32) (name string, types []TokenType, err error) {
	if x == nil || x.p == nil {
		return "", nil, nilTables()
	}
	var toks *C.ULONG
	var cname *C.char
	n, err := x.getCodedTokenInfo(ix, unsafe.Pointer(&toks), unsafe.Pointer(&cname))
	if err != nil {
		return "", nil, err
	}
	if toks != nil && n > 0 && n < 64 {
		for _, t := range unsafe.Slice(toks, n) {
			types = append(types, TokenType(t))
		}
	}
	return cString(cname), types, nil
}

// String returns the string at offset ix of the #Strings heap.
func (x *Tables) String(ix uint32) (string, error) {
	if x == nil || x.p == nil {
		return "", nilTables()
	}
	var s *C.char
	if err := x.getString(ix, unsafe.Pointer(&s)); err != nil {
		return "", err
	}
	return cString(s), nil
}

// GUID returns GUID number ix (1-based) of the #GUID heap.
func (x *Tables) GUID(ix uint32) (uuid.UUID, error) {
	if x == nil || x.p == nil {
		return uuid.UUID{}, nilTables()
	}
	var g *C.GUID
	if err := x.getGuid(ix, unsafe.Pointer(&g)); err != nil {
		return uuid.UUID{}, err
	}
	if g == nil {
		return uuid.UUID{}, fmt.Errorf("metadata: GUID %d: no value", ix)
	}
	return cgoutil.GUIDAt(unsafe.Pointer(g)), nil
}

// TableInfo is [Tables.TableInfo].
func (x *Tables2) TableInfo(ix uint32) (TableInfo, error) { return x.base().TableInfo(ix) }

// ColumnInfo is [Tables.ColumnInfo].
func (x *Tables2) ColumnInfo(ix, col uint32) (ColumnInfo, error) { return x.base().ColumnInfo(ix, col) }

// CodedTokenInfo is [Tables.CodedTokenInfo].
func (x *Tables2) CodedTokenInfo(ix uint32) (string, []TokenType, error) {
	return x.base().CodedTokenInfo(ix)
}

// String is [Tables.String].
func (x *Tables2) String(ix uint32) (string, error) { return x.base().String(ix) }

// GUID is [Tables.GUID].
func (x *Tables2) GUID(ix uint32) (uuid.UUID, error) { return x.base().GUID(ix) }

// MetaDataStream returns the name and contents of metadata stream ix
// ("#~", "#Strings", "#Blob", "#GUID", "#US", ...).
func (x *Tables2) MetaDataStream(ix uint32) (name string, data []byte, err error) {
	if x == nil || x.p == nil {
		return "", nil, com.NilObject("IMetaDataTables2")
	}
	var cname *C.char
	data, err = x.getMetaDataStreamInfo(ix, unsafe.Pointer(&cname))
	if err != nil {
		return "", nil, err
	}
	return cString(cname), data, nil
}

// Dispenser options (cor.h), for [DispenserEx.SetOption]. Every one takes
// a uint32 value (flags of CorCheckDuplicatesFor, CorRefToDefCheck,
// CorSetENC, CorImportOptions, CorThreadSafetyOptions, ... as cor.h
// documents them).
var (
	OptionCheckDuplicatesFor           = uuid.MustParse("30fe7be8-d7d9-11d2-9f80-00c04f79a0a3")
	OptionRefToDefCheck                = uuid.MustParse("de3856f8-d7d9-11d2-9f80-00c04f79a0a3")
	OptionNotificationForTokenMovement = uuid.MustParse("e5d71a4c-d7da-11d2-9f80-00c04f79a0a3")
	OptionSetUpdate                    = uuid.MustParse("2eee315c-d7db-11d2-9f80-00c04f79a0a3")
	OptionImportOption                 = uuid.MustParse("79700f36-4aac-11d3-84c3-009027868cb1")
	OptionThreadSafetyOptions          = uuid.MustParse("f7559806-f266-42ea-8c63-0adb45e8b234")
	OptionErrorIfEmitOutOfOrder        = uuid.MustParse("1547872d-dc03-11d2-9420-0000f8083460")
	OptionLinkerOptions                = uuid.MustParse("47e099b6-ae7c-4797-8317-b48aa645b8f9")
	OptionMergerOptions                = uuid.MustParse("132d3a6e-b35d-464e-951a-42efb9fb6601")
	OptionPreserveLocalRefs            = uuid.MustParse("a55c0354-e91b-468b-8648-7cc31035d533")
)

// SetOption sets a dispenser option (one of the Option variables) for the
// scopes the dispenser opens or defines from then on.
func (x *DispenserEx) SetOption(option uuid.UUID, value uint32) error {
	if x == nil || x.p == nil {
		return com.NilObject("IMetaDataDispenserEx")
	}
	g := cgoutil.ToGUID(option)
	if hr := C.clrprof_dispenser_set_ui4((*C.IMetaDataDispenserEx)(x.p), unsafe.Pointer(&g), C.uint32_t(value)); hr < 0 {
		return com.HRESULT(hr)
	}
	return nil
}

// GetOption returns the value of a dispenser option that holds a uint32
// (every Option variable; MetaDataRuntimeVersion, a string, is refused).
func (x *DispenserEx) GetOption(option uuid.UUID) (uint32, error) {
	if x == nil || x.p == nil {
		return 0, com.NilObject("IMetaDataDispenserEx")
	}
	g := cgoutil.ToGUID(option)
	var v C.uint32_t
	var vt C.uint16_t
	if hr := C.clrprof_dispenser_get_ui4((*C.IMetaDataDispenserEx)(x.p), unsafe.Pointer(&g), &v, &vt); hr < 0 {
		return 0, com.HRESULT(hr)
	}
	if vt != C.clrprof_VT_UI4 {
		return 0, fmt.Errorf("metadata: option %v holds a VARIANT of type %d, not a uint32", option, vt)
	}
	return uint32(v), nil
}

// CLSIDCorMetaDataRuntime is what [Dispenser.DefineScope] takes to define
// a new, empty scope of the current metadata format (cor.h's
// CLSID_CorMetaDataRuntime).
var CLSIDCorMetaDataRuntime = uuid.MustParse("efea471a-44fd-4862-9292-0c58d46e1f3a")
