package store

import "fmt"

// CheckContentName refuses an instance or content id that is not made of
// letters, digits, '-' and '_' (at most 64), so that a Contents may use
// them as file and object names as they are.
func CheckContentName(inst, id string) error {
	for _, s := range [2]string{inst, id} {
		if s == "" || len(s) > 64 {
			return fmt.Errorf("store: content name %q: want 1 to 64 characters", s)
		}
		for _, c := range s {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("store: content name %q: only letters, digits, '-' and '_'", s)
			}
		}
	}
	return nil
}
