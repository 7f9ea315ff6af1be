package fn

import (
	"encoding/json"

	"github.com/dop251/goja"
)

// jsonShaped reports whether v holds only the types toJS converts.
func jsonShaped(v any) bool {
	switch x := v.(type) {
	case nil, string, bool, float64, float32, int, int32, int64, uint, uint32, uint64, json.Number:
		return true
	case map[string]any:
		for _, e := range x {
			if !jsonShaped(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !jsonShaped(e) {
				return false
			}
		}
		return true
	case map[string]string, []string:
		return true
	}
	return false
}

// toJS builds plain JavaScript values (objects, arrays, primitives) from
// JSON-shaped Go values, much cheaper than JSON.parse of their text.
// Unlike vm.ToValue, maps and slices are copied, not wrapped.
func toJS(vm *goja.Runtime, v any) goja.Value {
	switch x := v.(type) {
	case nil:
		return goja.Null()
	case string:
		return vm.ToValue(x)
	case bool:
		return vm.ToValue(x)
	case float64, float32, int, int32, int64, uint, uint32, uint64:
		return vm.ToValue(x)
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return vm.ToValue(x.String())
		}
		return vm.ToValue(f)
	case map[string]any:
		o := vm.NewObject()
		for k, e := range x {
			setOwn(o, k, toJS(vm, e))
		}
		return o
	case map[string]string:
		o := vm.NewObject()
		for k, e := range x {
			setOwn(o, k, vm.ToValue(e))
		}
		return o
	case []any:
		vals := make([]any, len(x))
		for i, e := range x {
			vals[i] = toJS(vm, e)
		}
		return vm.NewArray(vals...)
	case []string:
		vals := make([]any, len(x))
		for i, e := range x {
			vals[i] = e
		}
		return vm.NewArray(vals...)
	}
	return goja.Undefined() // not reached: encodeInput shapes Args first
}

// setOwn gives o the own, enumerable property k, as JSON.parse does. A
// plain Set of "__proto__" would run Object.prototype's __proto__ setter
// and make the value o's prototype: a request's {"__proto__": {…}} would
// reach the function as inherited properties instead of data.
func setOwn(o *goja.Object, k string, v goja.Value) {
	if k == "__proto__" {
		must(o.DefineDataProperty(k, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE))
		return
	}
	must(o.Set(k, v))
}

// inputValue is main's first argument.
func inputValue(vm *goja.Runtime, in *input) *goja.Object {
	core := vm.NewObject()
	must(core.Set("account_id", in.Core.AccountID))
	must(core.Set("instance_id", in.Core.InstanceID))
	must(core.Set("domain", in.Core.Domain))
	must(core.Set("token", in.Core.Token))
	o := vm.NewObject()
	must(o.Set("args", toJS(vm, in.Args)))
	must(o.Set("env", toJS(vm, in.Env)))
	must(o.Set("core", core))
	return o
}
