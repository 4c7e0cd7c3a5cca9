package metadata

// Hand-written calls for the methods whose generated wrappers cannot hand
// back a signature blob or a name (their out-parameters are a pointer to
// the runtime's blob plus a length, or an output name buffer declared
// const).

import (
	"unsafe"

	"github.com/clrprof/clrprof/internal/cgoutil"
	com "github.com/clrprof/clrprof/internal/com"
)

// #include "thunks_gen.h"
import "C"

// nameBuf is the first size tried for names; longer names are fetched again
// with the size the runtime reports.
const nameBuf = 256

// maxNameLen bounds the buffers grown on the runtime's say-so.
const maxNameLen = 1 << 20

func growName(need C.ULONG, buf []uint16) ([]uint16, bool) {
	if int(need) <= len(buf) || need > maxNameLen {
		return buf, false
	}
	return make([]uint16, int(need)), true
}

func trimName(buf []uint16, n C.ULONG) string {
	l := min(int(n), len(buf))
	if l > 0 && buf[l-1] == 0 {
		l--
	}
	return cgoutil.DecodeUTF16(buf[:l])
}

// withNameAndOthers calls get with a buffer for a name and one for a list
// of method tokens, and again with bigger ones (at most three times more)
// while the lengths it reports do not fit. It returns the name and the
// tokens of the last call.
func withNameAndOthers(get func(name []uint16, others []Token) (n, nOthers C.ULONG, hr C.HRESULT)) (string, []Token, error) {
	buf := make([]uint16, nameBuf)
	other := make([]Token, 16)
	for attempt := 0; ; attempt++ {
		n, nOther, hr := get(buf, other)
		if hr < 0 && hr != com.InsufficientBuffer {
			return "", nil, com.HRESULT(hr)
		}
		var grown bool
		buf, grown = growName(n, buf)
		if int(nOther) > len(other) && nOther < maxNameLen {
			other, grown = make([]Token, int(nOther)), true
		}
		if grown && attempt < 3 {
			continue
		}
		return trimName(buf, n), append([]Token(nil), other[:min(int(nOther), len(other))]...), nil
	}
}

// memberRefRaw is IMetaDataImport::GetMemberRefProps with the signature.
func (x *Import) memberRefRaw(mr Token) (parent Token, name string, sig []byte, err error) {
	if x == nil || x.p == nil {
		return 0, "", nil, com.NilObject("IMetaDataImport")
	}
	buf := make([]uint16, nameBuf)
	for {
		var tk C.mdToken
		var n, cb C.ULONG
		var p C.PCCOR_SIGNATURE
		hr := C.clrprof_IMetaDataImport_GetMemberRefProps((*C.IMetaDataImport)(x.p), C.mdMemberRef(mr), &tk,
			(C.LPWSTR)(unsafe.Pointer(&buf[0])), C.ULONG(len(buf)), &n, &p, &cb)
		if hr < 0 && hr != com.InsufficientBuffer {
			return 0, "", nil, com.HRESULT(hr)
		}
		var grown bool
		if buf, grown = growName(n, buf); grown {
			continue
		}
		return Token(tk), trimName(buf, n), cgoutil.Bytes(unsafe.Pointer(p), int(cb)), nil
	}
}

// PropertyInfo is what [Import2.Property] returns.
type PropertyInfo struct {
	// Class is the TypeDef that declares the property.
	Class Token
	// Name is the property's name.
	Name string
	// Flags are the property's attributes.
	Flags PropertyAttr
	// Sig is the property's signature blob.
	Sig         []byte
	DefaultType ElementType // ELEMENT_TYPE of the default value (0 if none)
	// Default is the constant's bytes, empty for none.
	Default []byte
	// Setter and Getter are the MethodDefs of its set and get methods
	// (0 for none).
	Setter, Getter Token
	// Other are the MethodDefs of its other methods.
	Other []Token
}

// propertyRaw is IMetaDataImport::GetPropertyProps with name and signature.
func (x *Import) propertyRaw(prop Token) (PropertyInfo, error) {
	if x == nil || x.p == nil {
		return PropertyInfo{}, com.NilObject("IMetaDataImport")
	}
	var class C.mdTypeDef
	var cb, cbDef C.ULONG
	var flags, cplus C.DWORD
	var sig C.PCCOR_SIGNATURE
	var def C.UVCP_CONSTANT
	var setter, getter C.mdMethodDef
	name, other, err := withNameAndOthers(func(buf []uint16, other []Token) (n, nOther C.ULONG, hr C.HRESULT) {
		hr = C.clrprof_IMetaDataImport_GetPropertyProps((*C.IMetaDataImport)(x.p), C.mdProperty(prop), &class,
			(C.LPCWSTR)(unsafe.Pointer(&buf[0])), C.ULONG(len(buf)), &n, &flags, &sig, &cb, &cplus, &def, &cbDef,
			&setter, &getter, (*C.mdMethodDef)(unsafe.Pointer(&other[0])), C.ULONG(len(other)), &nOther)
		return n, nOther, hr
	})
	if err != nil {
		return PropertyInfo{}, err
	}
	return PropertyInfo{
		Class: Token(class), Name: name, Flags: PropertyAttr(flags), Sig: cgoutil.Bytes(unsafe.Pointer(sig), int(cb)),
		DefaultType: ElementType(cplus), Default: constantBytes(unsafe.Pointer(def), ElementType(cplus), int(cbDef)),
		Setter: Token(setter), Getter: Token(getter), Other: other,
	}, nil
}

// EventInfo is what [Import2.Event] returns.
type EventInfo struct {
	// Class is the TypeDef that declares the event.
	Class Token
	// Name is the event's name.
	Name string
	// Flags are the event's attributes.
	Flags EventAttr
	// Type is the event's delegate type.
	Type Token
	// AddOn, RemoveOn and Fire are the MethodDefs of the event's add,
	// remove and raise methods (0 for none).
	AddOn, RemoveOn, Fire Token
	// Other are the MethodDefs of its other methods.
	Other []Token
}

// eventRaw is IMetaDataImport::GetEventProps with the name.
func (x *Import) eventRaw(ev Token) (EventInfo, error) {
	if x == nil || x.p == nil {
		return EventInfo{}, com.NilObject("IMetaDataImport")
	}
	var class C.mdTypeDef
	var flags C.DWORD
	var typ C.mdToken
	var add, remove, fire C.mdMethodDef
	name, other, err := withNameAndOthers(func(buf []uint16, other []Token) (n, nOther C.ULONG, hr C.HRESULT) {
		hr = C.clrprof_IMetaDataImport_GetEventProps((*C.IMetaDataImport)(x.p), C.mdEvent(ev), &class,
			(C.LPCWSTR)(unsafe.Pointer(&buf[0])), C.ULONG(len(buf)), &n, &flags, &typ, &add, &remove, &fire,
			(*C.mdMethodDef)(unsafe.Pointer(&other[0])), C.ULONG(len(other)), &nOther)
		return n, nOther, hr
	})
	if err != nil {
		return EventInfo{}, err
	}
	return EventInfo{
		Class: Token(class), Name: name, Flags: EventAttr(flags), Type: Token(typ),
		AddOn: Token(add), RemoveOn: Token(remove), Fire: Token(fire), Other: other,
	}, nil
}

// constantBytes copies a constant's value: the runtime reports the length
// of string constants in characters and of others not at all.
func constantBytes(p unsafe.Pointer, k ElementType, n int) []byte {
	if p == nil {
		return nil
	}
	switch k {
	case ElementTypeString:
		return cgoutil.Bytes(p, 2*n)
	case ElementTypeBoolean, ElementTypeI1, ElementTypeU1:
		n = 1
	case ElementTypeChar, ElementTypeI2, ElementTypeU2:
		n = 2
	case ElementTypeI4, ElementTypeU4, ElementTypeR4:
		n = 4
	case ElementTypeI8, ElementTypeU8, ElementTypeR8:
		n = 8
	case ElementTypeClass:
		n = 4 // a null reference: four zero bytes
	default:
		return nil
	}
	return cgoutil.Bytes(p, n)
}

// fieldRaw is IMetaDataImport::GetFieldProps with the name, signature and
// constant (whose length the runtime gives in characters for strings and
// not at all for other types).
func (x *Import) fieldRaw(fd Token) (FieldInfo, error) {
	if x == nil || x.p == nil {
		return FieldInfo{}, com.NilObject("IMetaDataImport")
	}
	var class C.mdTypeDef
	var cb, cch C.ULONG
	var flags, cplus C.DWORD
	var sig C.PCCOR_SIGNATURE
	var def C.UVCP_CONSTANT
	name, _, err := withNameAndOthers(func(buf []uint16, _ []Token) (n, nOther C.ULONG, hr C.HRESULT) {
		hr = C.clrprof_IMetaDataImport_GetFieldProps((*C.IMetaDataImport)(x.p), C.mdFieldDef(fd), &class,
			(C.LPWSTR)(unsafe.Pointer(&buf[0])), C.ULONG(len(buf)), &n, &flags, &sig, &cb, &cplus, &def, &cch)
		return n, 0, hr
	})
	if err != nil {
		return FieldInfo{}, err
	}
	return FieldInfo{Token: fd, Class: Token(class), Name: name, Flags: FieldAttr(flags), Sig: cgoutil.Bytes(unsafe.Pointer(sig), int(cb)),
		DefaultType: ElementType(cplus), Default: constantBytes(unsafe.Pointer(def), ElementType(cplus), int(cch))}, nil
}
