package store

import (
	"errors"
	"fmt"
	"math"
)

// ErrArith is the error of an OpMath that cannot compute a field's new
// value: the stored value is not a number, a division by zero, or a
// result out of the field's range.
var ErrArith = errors.New("arithmetic refused")

// Arith is what an OpMath does to one numeric field, Hypi's math: the
// stored value (null counts as 0) divided by Div, times Times, minus
// Minus, plus Plus, in that order, each step only when given. A Whole
// field (Int, Long) is computed in 64-bit integers, its operands whole
// numbers: division truncates toward zero, and a result outside Min..Max
// (or beyond 64 bits on the way) is refused. Any other field is computed
// in float64; a result that is not finite is refused.
type Arith struct {
	Div, Times, Minus, Plus *float64
	// Whole operands, for a Whole field (the float ones are then unused).
	IDiv, ITimes, IMinus, IPlus *int64
	Whole                       bool
	Min, Max                    int64
}

// check refuses a division by zero and a whole field's missing bounds.
func (a Arith) check() error {
	if (a.Div != nil && *a.Div == 0) || (a.IDiv != nil && *a.IDiv == 0) {
		return fmt.Errorf("%w: division by zero", ErrArith)
	}
	if a.Whole && a.Min > a.Max {
		return fmt.Errorf("%w: bounds %d > %d", ErrArith, a.Min, a.Max)
	}
	return nil
}

// Apply returns a field's value after the operations.
func (a Arith) Apply(cur any) (any, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	if a.Whole {
		return a.whole(cur)
	}
	var v float64
	switch c := cur.(type) {
	case nil:
	case float64:
		v = c
	case int64:
		v = float64(c)
	default:
		return nil, fmt.Errorf("%w: the stored value is not a number", ErrArith)
	}
	if a.Div != nil {
		v /= *a.Div
	}
	if a.Times != nil {
		v *= *a.Times
	}
	if a.Minus != nil {
		v -= *a.Minus
	}
	if a.Plus != nil {
		v += *a.Plus
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("%w: the result is not a finite number", ErrArith)
	}
	return v, nil
}

func (a Arith) whole(cur any) (any, error) {
	var v int64
	switch c := cur.(type) {
	case nil:
	case int64:
		v = c
	case float64:
		if c != math.Trunc(c) || c < math.MinInt64 || c >= math.MaxInt64 {
			return nil, fmt.Errorf("%w: the stored value is not a whole number", ErrArith)
		}
		v = int64(c)
	default:
		return nil, fmt.Errorf("%w: the stored value is not a number", ErrArith)
	}
	over := fmt.Errorf("%w: the result is beyond %d..%d", ErrArith, a.Min, a.Max)
	if a.IDiv != nil {
		if v == math.MinInt64 && *a.IDiv == -1 {
			return nil, over
		}
		v /= *a.IDiv
	}
	if n := a.ITimes; n != nil {
		if v != 0 && *n != 0 {
			p := v * *n
			if p/(*n) != v || (v == -1 && *n == math.MinInt64) || (*n == -1 && v == math.MinInt64) {
				return nil, over
			}
			v = p
		} else {
			v = 0
		}
	}
	if n := a.IMinus; n != nil {
		d := v - *n
		if (*n > 0 && d > v) || (*n < 0 && d < v) {
			return nil, over
		}
		v = d
	}
	if n := a.IPlus; n != nil {
		s := v + *n
		if (*n > 0 && s < v) || (*n < 0 && s > v) {
			return nil, over
		}
		v = s
	}
	if v < a.Min || v > a.Max {
		return nil, over
	}
	return v, nil
}
