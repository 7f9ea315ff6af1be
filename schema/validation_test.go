package schema

import (
	"strings"
	"testing"
)

// TestValidationDirectivesRead: each of Hypi's validation directives is
// read into the field's Rules; @secret makes the field hidden.
func TestValidationDirectivesRead(t *testing.T) {
	t.Parallel()
	m, err := Parse(`type M {
  a: String @notNull @length(min: 2) @pattern(regex: "x+")
  b: [String!] @notEmpty @length(max: 4) @pattern(regex: ["a.*", ".*z"], allMustMatch: true)
  c: Email @email
  d: DateTime @past @immutable
  e: DateTime @future
  f: String @secret
  g: String
}`, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	typ, _ := m.Type("M")
	rules := func(name string) *Rules { f, _ := typ.Field(name); return f.Rules }
	if r := rules("a"); r == nil || !r.NotNull || r.Length.Min != 2 || r.Length.Max != -1 || len(r.Pattern.Regex) != 1 || r.Pattern.AllMustMatch {
		t.Errorf("a: %+v", r)
	}
	if r := rules("a"); r.Pattern.Regex[0].MatchString("xxy") || !r.Pattern.Regex[0].MatchString("xx") {
		t.Errorf("a's pattern is not matched against the whole value")
	}
	if r := rules("b"); r == nil || !r.NotEmpty || r.Length.Max != 4 || len(r.Pattern.Regex) != 2 || !r.Pattern.AllMustMatch {
		t.Errorf("b: %+v", r)
	}
	if r := rules("c"); r == nil || !r.Email {
		t.Errorf("c: %+v", r)
	}
	if r := rules("d"); r == nil || !r.Past || !r.Immutable {
		t.Errorf("d: %+v", r)
	}
	if r := rules("e"); r == nil || !r.Future {
		t.Errorf("e: %+v", r)
	}
	if f, _ := typ.Field("f"); f.Rules == nil || !f.Rules.Secret || !f.Hidden {
		t.Errorf("f: %+v hidden %v", f.Rules, f.Hidden)
	}
	if r := rules("g"); r != nil {
		t.Errorf("g has no directive but rules %+v", r)
	}
}

// TestValidationDirectivesRefused: a directive on a field it cannot
// apply to, or with arguments that cannot hold, is refused naming the
// field and the directive.
func TestValidationDirectivesRefused(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", MaxPatternBytes+1)
	many := strings.Repeat(`"a",`, MaxPatterns+1)
	for _, tc := range []struct{ sdl, want string }{
		{`type M { n: Int @length(max: 3) }`, "field M.n: @length applies only to String fields"},
		{`type M { n: String @length }`, "field M.n: @length needs min, max or both"},
		{`type M { n: String @length(min: 5, max: 2) }`, "field M.n: @length min 5 is greater than max 2"},
		{`type M { n: String @length(min: -1) }`, "field M.n: @length min must be a whole number ≥ 0"},
		{`type M { n: Int @pattern(regex: "1") }`, "field M.n: @pattern applies only to String fields"},
		{`type M { n: String @pattern(regex: "a(") }`, `field M.n: @pattern: "a(" is not a regular expression of RE2 syntax`},
		{`type M { n: String @pattern(regex: "a)|(b") }`, `is not a regular expression of RE2 syntax`},
		{`type M { n: String @pattern(regex: "(?<=a)b") }`, `is not a regular expression of RE2 syntax`},
		{`type M { n: String @pattern(regex: "` + long + `") }`, "a regular expression may be at most 512 bytes long"},
		{`type M { n: String @pattern(regex: [` + many + `]) }`, "@pattern takes at most 16 regular expressions"},
		{`type M { n: String @pattern(regex: []) }`, "@pattern needs at least one regular expression"},
		{`type M { n: Int @email }`, "field M.n: @email applies only to String and Email fields"},
		{`type M { n: String @past }`, "field M.n: @past applies only to DateTime fields"},
		{`type M { n: DateTime @past @future }`, "field M.n: @past and @future together can never hold"},
		{`type M { n: [String] @secret }`, "field M.n: @secret applies only to single String fields"},
		{`type M { n: String @secret @unique }`, "field M.n: @secret cannot be combined with @unique"},
		{`type M { n: String @secret @immutable }`, "field M.n: @secret cannot be combined with @immutable"},
		{`type M { n: Int @notEmpty }`, "field M.n: @notEmpty applies only to String fields and lists"},
		{`type M { n: String @secret } type N { m: M }`, ""},
		{`type M { n: String @secret } extend type M @indices(sets: [["n"]])`, "n is hidden and cannot be indexed"},
		{`type Query { q(a: String): Int @length(max: 2) }`, "@length is allowed only on fields of record types"},
	} {
		_, err := Parse(tc.sdl, DefaultLimits())
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want it accepted", tc.sdl, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error containing %q", tc.sdl, err, tc.want)
		}
	}
}
