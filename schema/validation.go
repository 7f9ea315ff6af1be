package schema

import (
	"regexp"
	"strconv"

	"github.com/vektah/gqlparser/v2/ast"
)

// Bounds of @pattern: a field names at most MaxPatterns regular
// expressions of at most MaxPatternBytes each. Go's regexp (RE2) matches
// in time linear in the value, so these bound the cost of a check.
const (
	MaxPatterns     = 16
	MaxPatternBytes = 512
)

// Rules are the validation directives of one record field, with Hypi's
// meanings. gql enforces them on every write (gql/rules.go).
type Rules struct {
	// NotNull (@notNull): given when the record is created, never cleared.
	NotNull bool
	// NotEmpty (@notEmpty): not null, not "", not [].
	NotEmpty bool
	// Length (@length(min, max)): a String's length in characters, each
	// element's on a list; nil when absent. Max < 0 means no maximum.
	Length *Length
	// Pattern (@pattern(regex, allMustMatch)): the whole value matches one
	// of Regex (all of them with AllMustMatch); on a list, each element.
	Pattern *Pattern
	// Email (@email): a String holding an e-mail address.
	Email bool
	// Past and Future (@past, @future): a DateTime before or after the time
	// of the write.
	Past, Future bool
	// Immutable (@immutable): once a record exists the field keeps the
	// value it was created with.
	Immutable bool
	// Secret (@secret): the value is kept as an Argon2id hash; the field is
	// Hidden (never returned) and ArcQL may compare it only by equality.
	Secret bool
}

// Length is @length(min, max).
type Length struct{ Min, Max int }

// Pattern is @pattern(regex, allMustMatch).
type Pattern struct {
	Source       []string
	Regex        []*regexp.Regexp
	AllMustMatch bool
}

// fieldRules reads the validation directives of a record field and checks
// that each fits the field's type: @length and @pattern on String fields
// (or lists of them), @email on String or Email, @past and @future on
// DateTime, @notEmpty on String fields and lists, @secret on a single
// String that is neither @unique nor indexed.
func (b *builder) fieldRules(subject string, f *Field, ds map[string]*ast.Directive) {
	r := &Rules{}
	has := false
	isString := f.Kind == KindScalar && f.Type == "String"
	needs := func(d *ast.Directive, ok bool, what string) bool {
		if !ok {
			b.errs.at(d.Position, "%s: @%s applies only to %s, not to %s", subject, d.Name, what, typeText(f))
		}
		has = has || ok
		return ok
	}
	if d := ds["notNull"]; d != nil {
		r.NotNull = needs(d, true, "")
	}
	if d := ds["notEmpty"]; d != nil {
		r.NotEmpty = needs(d, isString || f.List, "String fields and lists")
	}
	if d := ds["length"]; d != nil && needs(d, isString, "String fields (or lists of String)") {
		r.Length = b.lengthRule(subject, d)
	}
	if d := ds["pattern"]; d != nil && needs(d, isString, "String fields (or lists of String)") {
		r.Pattern = b.patternRule(subject, d)
	}
	if d := ds["email"]; d != nil {
		r.Email = needs(d, isString || f.Type == "Email", "String and Email fields")
	}
	if d := ds["past"]; d != nil {
		r.Past = needs(d, f.Type == "DateTime", "DateTime fields")
	}
	if d := ds["future"]; d != nil {
		r.Future = needs(d, f.Type == "DateTime", "DateTime fields")
	}
	if r.Past && r.Future {
		b.errs.at(ds["future"].Position, "%s: @past and @future together can never hold", subject)
	}
	if d := ds["immutable"]; d != nil {
		r.Immutable = needs(d, true, "")
	}
	if d := ds["secret"]; d != nil {
		if needs(d, isString && !f.List, "single String fields") {
			r.Secret = true
			f.Hidden = true
			for _, other := range []string{"unique", "length", "pattern", "email", "immutable"} {
				if ds[other] != nil {
					b.errs.at(d.Position, "%s: @secret cannot be combined with @%s (a secret is compared by its hash only)", subject, other)
				}
			}
		}
	}
	if has {
		f.Rules = r
	}
}

// lengthRule reads @length(min, max): at least one bound, neither
// negative, min ≤ max.
func (b *builder) lengthRule(subject string, d *ast.Directive) *Length {
	l := &Length{Min: 0, Max: -1}
	given := false
	for _, arg := range [...]struct {
		name string
		to   *int
	}{{"min", &l.Min}, {"max", &l.Max}} {
		a := d.Arguments.ForName(arg.name)
		if a == nil || a.Value == nil || a.Value.Kind == ast.NullValue {
			continue
		}
		n, err := strconv.Atoi(a.Value.Raw)
		if err != nil || n < 0 {
			b.errs.at(valuePos(a.Value, a.Position), "%s: @length %s must be a whole number ≥ 0", subject, arg.name)
			return nil
		}
		*arg.to, given = n, true
	}
	switch {
	case !given:
		b.errs.at(d.Position, "%s: @length needs min, max or both", subject)
		return nil
	case l.Max >= 0 && l.Min > l.Max:
		b.errs.at(d.Position, "%s: @length min %d is greater than max %d", subject, l.Min, l.Max)
		return nil
	}
	return l
}

// patternRule reads @pattern(regex, allMustMatch): 1 to MaxPatterns
// expressions of RE2 syntax, each at most MaxPatternBytes long. A value
// matches an expression when the whole value does (as Java's
// Matcher.matches, which Hypi uses): the expression is anchored.
func (b *builder) patternRule(subject string, d *ast.Directive) *Pattern {
	p := &Pattern{}
	a := d.Arguments.ForName("regex")
	items := listItems(a.Value)
	switch {
	case len(items) == 0:
		b.errs.at(valuePos(a.Value, a.Position), "%s: @pattern needs at least one regular expression", subject)
		return nil
	case len(items) > MaxPatterns:
		b.errs.at(valuePos(a.Value, a.Position), "%s: @pattern takes at most %d regular expressions, not %d", subject, MaxPatterns, len(items))
		return nil
	}
	ok := true
	for _, item := range items {
		pos := valuePos(item, a.Position)
		if len(item.Raw) > MaxPatternBytes {
			b.errs.at(pos, "%s: @pattern: a regular expression may be at most %d bytes long", subject, MaxPatternBytes)
			ok = false
			continue
		}
		// The expression alone must compile first: then its parentheses
		// balance and the anchors wrap all of it.
		_, err := regexp.Compile(item.Raw)
		var re *regexp.Regexp
		if err == nil {
			re, err = regexp.Compile(`^(?:` + item.Raw + `)$`)
		}
		if err != nil {
			b.errs.at(pos, "%s: @pattern: %q is not a regular expression of RE2 syntax: %v", subject, item.Raw, err)
			ok = false
			continue
		}
		p.Source = append(p.Source, item.Raw)
		p.Regex = append(p.Regex, re)
	}
	if all := d.Arguments.ForName("allMustMatch"); all != nil && all.Value != nil {
		p.AllMustMatch = all.Value.Raw == "true"
	}
	if !ok {
		return nil
	}
	return p
}
