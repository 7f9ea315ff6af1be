// Package arcql is ArcQL, the one filter language of the service: its
// parser, its binder and its reference evaluator. The language is specified
// in docs/arcql.md; this package is the single place that reads user text.
//
// A filter goes through three pure steps:
//
//   - Parse turns text into a *Query (an AST of Expr nodes and sort keys),
//     enforcing Limits (length, nesting, comparisons, string size,
//     wildcards). It never panics and never recurses without bound; every
//     failure is an *Error with a line and column.
//   - Bind checks the query against a Schema for one record type and
//     returns a new, typed query: unknown and hidden fields are errors,
//     literals are coerced to the field's type (timestamps become
//     KindTime), "core.x" metadata paths become the single part "core.x",
//     core.instanceId is folded away, and paths through reference fields
//     become *Hop nodes that a store resolves with a bounded sub-query into
//     *InIDs.
//   - Match evaluates a bound expression against one record (a Valuer), and
//     CompareSort orders records by bound sort keys. They are the reference
//     meaning that every store must reproduce, and a store may simply call
//     them.
//
// Stores never receive user text, only bound ASTs. Query.String (and
// Format for one expression) prints the canonical text of a query, which
// Parse reads back to the same AST; it is meant for logs and golden tests.
//
// The contract for stores: a bound filter holds only *And, *Or, *Not,
// *All, *Exist, *Compare (never with a null Value), *Range and *Hop; a
// store resolves every *Hop (bounding the sub-query) into an *InIDs and then
// gives exactly the answer Match gives, in the order CompareSort gives.
// Never() is the canonical expression that matches nothing.
//
// Decisions the language leaves open, taken here:
//
//   - Keywords are recognised by position, so a field may be named like a
//     keyword: "desc = 'x' SORT desc DESC" filters and sorts on a field
//     named desc. A name followed by an operator (or by IN and a range) is
//     a path.
//   - Paths are written without spaces around the dots. Columns in errors
//     count characters (runes), from 1.
//   - `f != v` is exactly NOT (f = v): it matches a record without f, and a
//     list field none of whose elements is v.
//   - Comparing with null is allowed only with = and != (Bind rejects the
//     other operators and null range bounds).
//   - `~` on text with no words at all is a Bind error. Words are runs of
//     letters and digits (Unicode), with combining marks kept in the word;
//     case is folded with strings.EqualFold.
//   - `*` patterns are case-sensitive, like = and ^, and have no escape:
//     '*' and '?' are always wildcards ('?' matches a literal '?' anyway).
//   - `~`, `^` and `*` see a number as its decimal text
//     (strconv.FormatFloat(x, 'f', -1, 64)) and a timestamp as RFC 3339
//     UTC text; they are refused on Boolean and object fields.
//   - Timestamps: a literal for a time field is RFC 3339 with a zone, or a
//     bare date meaning midnight UTC. Bind turns it into a KindTime Value
//     whose Time is in UTC and whose Str is the canonical RFC 3339 (nano)
//     UTC text. Match compares KindTime values chronologically, parsing a
//     DateTime field's stored string, so "…00.500Z" and "…00.5Z" are equal.
//   - A string literal for a String, ID or Enum field may be any text; a
//     number literal becomes the text it was written as ("5.0" stays "5.0").
//     A Boolean field takes true/false or the strings 'true'/'false'.
//     Below a Json field values are not coerced and kinds never mix.
//   - SORT may not name a list field, a hidden field or a path through a
//     reference. CompareValues ranks strings before timestamps (rather than
//     mixing them) so that its order stays total.
//   - A reference inside an embedded object gives a Hop whose Field is the
//     dotted path to it ("address.city"); Match reads such an InIDs field
//     the same way.
//   - An all-* filter ("*", "(*)") parses to a nil Filter; Parse keeps a
//     number literal's text in Value.Str beside Value.Num.
//   - Limits with a zero field use the default for it.
package arcql
