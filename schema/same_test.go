package schema

import "testing"

func TestSame(t *testing.T) {
	base := `type Book @indices(sets: [["price"]]) { title: String price: Float }`
	for _, tc := range []struct {
		name, other string
		same        bool
	}{
		{"itself", base, true},
		{"comments, white space and descriptions", "# the shop\n\"A book.\"\ntype Book @indices(sets: [[\"price\"]]) {\n  \"Its name.\"\n  title: String # shown\n\n  price: Float\n}\n", true},
		{"a field's type", `type Book @indices(sets: [["price"]]) { title: String price: Int }`, false},
		{"a field more", `type Book @indices(sets: [["price"]]) { title: String price: Float isbn: String }`, false},
		{"a directive", `type Book { title: String price: Float }`, false},
		{"required", `type Book @indices(sets: [["price"]]) { title: String! price: Float }`, false},
		{"not SDL", `type Book {`, false},
	} {
		if got := Same(base, tc.other, DefaultLimits()); got != tc.same {
			t.Errorf("%s: Same = %v, want %v", tc.name, got, tc.same)
		}
	}
}
