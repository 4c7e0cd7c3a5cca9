package soak

import "testing"

// jitlog's and ilcount's names of the same methods (taken from their
// output on mcs) normalize to the same string; different methods do not.
func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ jitlog, ilcount string }{
		{"Mono.CSharp.Tokenizer.xtoken", "Mono.CSharp.Tokenizer::xtoken"},
		{"Mono.CSharp.Tokenizer+KeywordEntry<int>..ctor", "Mono.CSharp.Tokenizer/KeywordEntry`1::.ctor"},
		{"Mono.CSharp.ReferenceEquality<T>..cctor", "Mono.CSharp.ReferenceEquality`1::.cctor"},
		{"Mono.CSharp.Tokenizer.AddKeyword<Mono.CSharp.Tokenizer+PreprocessorDirective>", "Mono.CSharp.Tokenizer::AddKeyword"},
		{"IKVM.Reflection.CustomModifiers+Enumerator.System.IDisposable.Dispose", "IKVM.Reflection.CustomModifiers/Enumerator::System.IDisposable.Dispose"},
		{"IKVM.Reflection.Emit.ILGenerator+ExceptionBlock.System.Collections.Generic.IComparer<IKVM.Reflection.Emit.ILGenerator+ExceptionBlock>.Compare",
			"IKVM.Reflection.Emit.ILGenerator/ExceptionBlock::System.Collections.Generic.IComparer<IKVM.Reflection.Emit.ILGenerator.ExceptionBlock>.Compare"},
	} {
		if j, i := normalize(tc.jitlog), normalize(tc.ilcount); j != i {
			t.Errorf("%q -> %q but %q -> %q", tc.jitlog, j, tc.ilcount, i)
		}
	}
	for _, pair := range [][2]string{
		{"Mono.CSharp.Tokenizer..ctor", "Mono.CSharp.Tokenizer::.cctor"},
		{"Mono.CSharp.Tokenizer+Position..ctor", "Mono.CSharp.Tokenizer::.ctor"},
		{"Mono.CSharp.Tokenizer.xtoken", "Mono.CSharp.Tokenizer::token"},
	} {
		if normalize(pair[0]) == normalize(pair[1]) {
			t.Errorf("%q and %q normalize to the same %q", pair[0], pair[1], normalize(pair[0]))
		}
	}
}

// diffOffsets names the differing bytes.
func TestDiffOffsets(t *testing.T) {
	if got, want := diffOffsets([]byte("abcdef"), []byte("abXdeY")), "2 differing bytes [0x2 0x5]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := diffOffsets([]byte("abc"), []byte("abcd")), "0 differing bytes [], lengths 3 and 4"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
