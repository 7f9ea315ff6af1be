package gql

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/schema"
	"github.com/corehq/core/tenant"
)

// TestConfigWithDefaults: every figure left 0 (or set negative) is
// DefaultConfig's, every figure set is kept, and RateLimit's nil (no
// limit) stays nil. The figures are found by reflection, so a field of a
// kind withDefaults does not know fails here.
func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff(DefaultConfig(), Config{}.withDefaults()); diff != "" {
		t.Errorf("the zero Config (-want +got):\n%s", diff)
	}

	negative, set := Config{}, Config{RateLimit: &tenant.RateLimit{RequestsPerSecond: 3}}
	neg, pos := reflect.ValueOf(&negative).Elem(), reflect.ValueOf(&set).Elem()
	for i := range neg.NumField() {
		switch f := neg.Field(i); f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(-1)
			pos.Field(i).SetInt(7)
		case reflect.Pointer:
		default:
			t.Fatalf("Config.%s is a %s: say in withDefaults (and here) what its zero value means", neg.Type().Field(i).Name, f.Kind())
		}
	}
	if diff := cmp.Diff(DefaultConfig(), negative.withDefaults()); diff != "" {
		t.Errorf("negative figures (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(set, set.withDefaults()); diff != "" {
		t.Errorf("figures that are set (-want +got):\n%s", diff)
	}
	if set.SessionCheck != 7*time.Nanosecond {
		t.Errorf("SessionCheck = %v: the reflection did not set it", set.SessionCheck)
	}
}

// TestBuildAppliesDefaults: a schema built with the zero Config runs with
// DefaultConfig's bounds (the readers of Schema.cfg patch nothing).
func TestBuildAppliesDefaults(t *testing.T) {
	t.Parallel()
	m, err := schema.Parse("type Book { title: String }", schema.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Build(m, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(DefaultConfig(), s.cfg); diff != "" {
		t.Errorf("Schema.cfg (-want +got):\n%s", diff)
	}
}
