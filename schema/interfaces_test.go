package schema

import (
	"slices"
	"testing"
)

// TestInterfaceExtension: extend interface adds fields its implementations
// must then have, and extend type … implements adds an implementation.
func TestInterfaceExtension(t *testing.T) {
	sdl := "interface Item { name: String }\nextend interface Item { price: Float }\n" +
		"type Product implements Item { name: String\n price: Float }\ntype Service { name: String }\n" +
		"extend type Service implements Item { price: Float }"
	m, err := Parse(sdl, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	in, ok := m.Interface("Item")
	if !ok || len(in.Fields) != 2 || !slices.Equal(in.Impls, []string{"Product", "Service"}) {
		t.Fatalf("Item: %+v", in)
	}
	_, err = Parse("interface Item { name: String }\nextend interface Item { price: Float }\ntype Product implements Item { name: String }", DefaultLimits())
	if err == nil || err.Error() != "3:6: type Product implements Item but has no field price (Float)" {
		t.Errorf("an implementation missing the extension's field: %v", err)
	}
}
