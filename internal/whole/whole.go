// Package whole reads whole numbers that float64 cannot hold exactly, for
// the decoders that otherwise read every number as a float64 (gql's JSON
// decoder and GraphQL literals, ArcQL literals): a Long beyond 2^53 must
// stay exact end to end.
package whole

import "strconv"

// BeyondFloat returns the whole number text writes in decimal digits (an
// optional minus sign; no plus sign, fraction or exponent) when int64
// holds it and float64 does not: 9007199254740993 (2^53 + 1), but not
// 9007199254740992 nor -9223372036854775808, which float64 holds.
func BeyondFloat(text string) (int64, bool) {
	if len(text) == 0 || len(text) > 20 || text[0] == '+' {
		return 0, false
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, false
	}
	if f := float64(n); f < 1<<63 && int64(f) == n {
		return 0, false
	}
	return n, true
}
