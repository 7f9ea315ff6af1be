package jsonvalue

// Kind names the kind of a value Decode returns the way a client thinks of
// it, for messages: "an object", "an array", "a string", "a number",
// "a boolean" or "null".
func Kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}
