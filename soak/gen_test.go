package soak

import (
	"strings"
	"testing"
)

// The generator is deterministic, its size follows the parameter, and the
// expected output is a function of it.
func TestGenerate(t *testing.T) {
	a, b := Generate(30), Generate(30)
	if a.Source != b.Source || a.Expected != b.Expected {
		t.Fatal("two programs of 30 classes differ")
	}
	c := Generate(31)
	if c.Expected == a.Expected {
		t.Fatal("31 classes expect the same output as 30")
	}
	if !strings.HasPrefix(c.Source, a.Source[:strings.Index(a.Source, "public static class Program")-5]) {
		t.Error("the 31-class program does not extend the 30-class one")
	}
	if a.Classes != 30 || a.Lines < 30*100 || strings.Count(a.Source, "\tpublic class C") != 30 {
		t.Errorf("30 classes: %d classes, %d lines", a.Classes, a.Lines)
	}
	if !strings.HasPrefix(a.Expected, "classes 30\nderived 8\ncctors 30\nweights ") || strings.Count(a.Expected, "\n") != 5 {
		t.Errorf("expected output:\n%s", a.Expected)
	}
	for _, feature := range []string{"yield return", "yield break", "when (", "finally", "orderby", "group x by", "where T : IComparable<T>", "where T : class", "static C1()", "struct S", "=> {", "Dictionary<int, List<Pair<long, string>>>", "SoakException<string>", ".Aggregate(", "#warning"} {
		if !strings.Contains(a.Source, feature) {
			t.Errorf("the program lacks %q", feature)
		}
	}
	t.Logf("30 classes: %d lines, %d bytes; expected:\n%s", a.Lines, len(a.Source), a.Expected)
}
