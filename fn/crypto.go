package fn

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"
)

// requireCrypto is require('crypto'): the part of Node's crypto a
// webhook verifier needs, plus one-call helpers, all implemented in Go
// (doc.go lists the API).
func requireCrypto(vm *goja.Runtime, module *goja.Object) {
	exports := module.Get("exports").ToObject(vm)
	set := func(name string, f func(goja.FunctionCall) goja.Value) { must(exports.Set(name, f)) }

	set("createHash", func(fc goja.FunctionCall) goja.Value {
		newHash := hashByName(vm, fc.Argument(0))
		return hashObject(vm, newHash())
	})
	set("createHmac", func(fc goja.FunctionCall) goja.Value {
		newHash := hashByName(vm, fc.Argument(0))
		key := bytesArg(vm, fc.Argument(1), goja.Undefined(), "key")
		return hashObject(vm, hmac.New(newHash, key))
	})
	set("timingSafeEqual", func(fc goja.FunctionCall) goja.Value {
		a := bytesArg(vm, fc.Argument(0), goja.Undefined(), "a")
		b := bytesArg(vm, fc.Argument(1), goja.Undefined(), "b")
		if len(a) != len(b) {
			panic(newRangeError(vm, "Input buffers must have the same byte length"))
		}
		return vm.ToValue(subtle.ConstantTimeCompare(a, b) == 1)
	})

	oneShot := func(mac bool, newHash func() hash.Hash) func(goja.FunctionCall) goja.Value {
		return func(fc goja.FunctionCall) goja.Value {
			var h hash.Hash
			args := fc.Arguments
			if mac {
				h = hmac.New(newHash, bytesArg(vm, fc.Argument(0), goja.Undefined(), "key"))
				args = args[min(1, len(args)):]
			} else {
				h = newHash()
			}
			data, enc := goja.Undefined(), goja.Undefined()
			if len(args) > 0 {
				data = args[0]
			}
			if len(args) > 1 {
				enc = args[1]
			}
			h.Write(bytesArg(vm, data, goja.Undefined(), "data"))
			if goja.IsUndefined(enc) {
				enc = vm.ToValue("hex")
			}
			return encodeDigest(vm, h.Sum(nil), enc)
		}
	}
	set("hmacSHA256", oneShot(true, sha256.New))
	set("hmacSHA1", oneShot(true, sha1.New))
	set("hmacSHA512", oneShot(true, sha512.New))
	set("sha256", oneShot(false, sha256.New))
	set("sha1", oneShot(false, sha1.New))
	set("sha512", oneShot(false, sha512.New))
	set("equal", func(fc goja.FunctionCall) goja.Value {
		a := bytesArg(vm, fc.Argument(0), goja.Undefined(), "a")
		b := bytesArg(vm, fc.Argument(1), goja.Undefined(), "b")
		// ConstantTimeCompare answers at once for different lengths; the
		// length of a signature is no secret.
		return vm.ToValue(subtle.ConstantTimeCompare(a, b) == 1)
	})
	set("base64Encode", func(fc goja.FunctionCall) goja.Value {
		return vm.ToValue(base64.StdEncoding.EncodeToString(bytesArg(vm, fc.Argument(0), goja.Undefined(), "data")))
	})
	set("base64UrlEncode", func(fc goja.FunctionCall) goja.Value {
		return vm.ToValue(base64.RawURLEncoding.EncodeToString(bytesArg(vm, fc.Argument(0), goja.Undefined(), "data")))
	})
	set("base64Decode", func(fc goja.FunctionCall) goja.Value {
		b, ok := decodeBase64(fc.Argument(0).String())
		if !ok {
			panic(vm.NewTypeError("base64Decode: the argument is not base64"))
		}
		return vm.ToValue(string(b))
	})
	set("hexEncode", func(fc goja.FunctionCall) goja.Value {
		return vm.ToValue(hex.EncodeToString(bytesArg(vm, fc.Argument(0), goja.Undefined(), "data")))
	})
	set("hexDecode", func(fc goja.FunctionCall) goja.Value {
		b, err := hex.DecodeString(fc.Argument(0).String())
		if err != nil {
			panic(vm.NewTypeError("hexDecode: the argument is not hex"))
		}
		return vm.ToValue(string(b))
	})
}

// newRangeError is a JavaScript RangeError, as Node throws.
func newRangeError(vm *goja.Runtime, msg string) goja.Value {
	if ctor, ok := goja.AssertConstructor(vm.Get("RangeError")); ok {
		if obj, err := ctor(nil, vm.ToValue(msg)); err == nil {
			return obj
		}
	}
	return vm.NewGoError(errors.New(msg))
}

// hashByName returns the constructor of a hash Node names so.
func hashByName(vm *goja.Runtime, v goja.Value) func() hash.Hash {
	name := strings.ReplaceAll(strings.ToLower(v.String()), "-", "")
	switch name {
	case "sha256":
		return sha256.New
	case "sha1":
		return sha1.New
	case "sha512":
		return sha512.New
	case "sha384":
		return sha512.New384
	case "md5":
		return md5.New
	}
	panic(vm.NewTypeError("unsupported digest algorithm %q (sha256, sha1, sha384, sha512, md5)", v.String()))
}

// hashObject is Node's Hash/Hmac: update(data[, inputEncoding]) returns
// the object, digest([encoding]) a string or, without encoding, a Buffer.
func hashObject(vm *goja.Runtime, h hash.Hash) *goja.Object {
	obj := vm.NewObject()
	done := false
	must(obj.Set("update", func(fc goja.FunctionCall) goja.Value {
		if done {
			panic(newRangeError(vm, "Digest already called"))
		}
		h.Write(bytesArg(vm, fc.Argument(0), fc.Argument(1), "data"))
		return obj
	}))
	must(obj.Set("digest", func(fc goja.FunctionCall) goja.Value {
		if done {
			panic(newRangeError(vm, "Digest already called"))
		}
		done = true
		return encodeDigest(vm, h.Sum(nil), fc.Argument(0))
	}))
	return obj
}

// encodeDigest renders bytes as hex, base64, base64url, latin1 or, for
// no encoding, a Buffer.
func encodeDigest(vm *goja.Runtime, sum []byte, enc goja.Value) goja.Value {
	if goja.IsUndefined(enc) || goja.IsNull(enc) {
		return buffer.WrapBytes(vm, sum)
	}
	switch strings.ToLower(enc.String()) {
	case "hex":
		return vm.ToValue(hex.EncodeToString(sum))
	case "base64":
		return vm.ToValue(base64.StdEncoding.EncodeToString(sum))
	case "base64url":
		return vm.ToValue(base64.RawURLEncoding.EncodeToString(sum))
	case "latin1", "binary":
		r := make([]rune, len(sum))
		for i, b := range sum {
			r[i] = rune(b)
		}
		return vm.ToValue(string(r))
	}
	panic(vm.NewTypeError("unsupported encoding %q (hex, base64, base64url, latin1)", enc.String()))
}

// bytesArg reads bytes from a string (UTF-8 unless enc says hex, base64,
// base64url or latin1), a Buffer or typed array, or an ArrayBuffer.
func bytesArg(vm *goja.Runtime, v, enc goja.Value, what string) []byte {
	if isNullish(v) {
		panic(vm.NewTypeError("the %s argument must be a string, a Buffer or a typed array", what))
	}
	if s, ok := v.Export().(string); ok {
		if isNullish(enc) {
			return []byte(s)
		}
		switch strings.ToLower(enc.String()) {
		case "utf8", "utf-8":
			return []byte(s)
		case "hex":
			b, err := hex.DecodeString(s)
			if err != nil {
				panic(vm.NewTypeError("the %s argument is not hex", what))
			}
			return b
		case "base64", "base64url":
			b, ok := decodeBase64(s)
			if !ok {
				panic(vm.NewTypeError("the %s argument is not base64", what))
			}
			return b
		case "latin1", "binary":
			b := make([]byte, 0, len(s))
			for _, r := range s {
				b = append(b, byte(r))
			}
			return b
		}
		panic(vm.NewTypeError("unsupported encoding %q (utf8, hex, base64, base64url, latin1)", enc.String()))
	}
	switch x := v.Export().(type) {
	case goja.ArrayBuffer:
		return x.Bytes()
	case []byte:
		return x
	}
	panic(vm.NewTypeError("the %s argument must be a string, a Buffer or a typed array", what))
}

// decodeBase64 accepts the standard and URL alphabets, padded or not.
func decodeBase64(s string) ([]byte, bool) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	if strings.ContainsAny(s, "-_") {
		b, err := base64.RawURLEncoding.DecodeString(s)
		return b, err == nil
	}
	b, err := base64.RawStdEncoding.DecodeString(s)
	return b, err == nil
}
