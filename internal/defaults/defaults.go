// Package defaults decides what a zero figure in a component's limits
// means: the component's default, never "no limit" by accident. The
// engine's Config, the schema's and ArcQL's parse limits and the function
// logs' configuration state their bounds as counts and durations, and a
// caller that leaves one out (or sets it below zero) gets the default the
// component documents; Fill is that rule, applied the same way for each.
package defaults

import "reflect"

// Fill returns c with def's value in place of each of its figures that is
// 0 or negative: every exported field of an integer kind (int, int64,
// time.Duration, …). Other fields (strings, bools, pointers, structs,
// floats) are left as they are: their zero values mean what their
// component says. T must be a struct type.
func Fill[T any](c, def T) T {
	v, d := reflect.ValueOf(&c).Elem(), reflect.ValueOf(def)
	for i := range v.NumField() {
		if f := v.Field(i); f.CanSet() && f.CanInt() && f.Int() <= 0 {
			f.SetInt(d.Field(i).Int())
		}
	}
	return c
}
