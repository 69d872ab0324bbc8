package config

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

var durationType = reflect.TypeFor[time.Duration]()

// boolSyntax says which spellings of a boolean are accepted.
type boolSyntax int

const (
	// yamlBools accepts YAML 1.2's true/True/TRUE/false/False/FALSE (not yes/no/on/off).
	yamlBools boolSyntax = iota
	// envBools accepts what strconv.ParseBool accepts (1, t, true, 0, f, false, ...),
	// as the Vault and BOSH CLIs do for their variables.
	envBools
)

// setScalar parses text into v according to v's type. It returns a message
// naming what is wrong, or "" on success; v is left untouched on failure.
func setScalar(v reflect.Value, text string, bools boolSyntax) string {
	if v.Type() == durationType {
		d, err := time.ParseDuration(strings.TrimSpace(text))
		if err != nil {
			return fmt.Sprintf("invalid duration %q", text)
		}
		v.SetInt(int64(d))
		return ""
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(text)
	case reflect.Bool:
		b, ok := parseBool(text, bools)
		if !ok {
			return fmt.Sprintf("not a boolean: %q", text)
		}
		v.SetBool(b)
	case reflect.Int:
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 0)
		if err != nil {
			return fmt.Sprintf("not an integer: %q", text)
		}
		v.SetInt(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Sprintf("not a number: %q", text)
		}
		v.SetFloat(f)
	default:
		return fmt.Sprintf("cannot be set from %q", text)
	}
	return ""
}

func parseBool(text string, bools boolSyntax) (value, ok bool) {
	if bools == envBools {
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		return b, err == nil
	}
	switch text {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	return false, false
}

// yamlKey returns the key a struct field has in the file.
func yamlKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// fieldByKey finds the field of struct v whose yaml key is key.
func fieldByKey(v reflect.Value, key string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		if k := yamlKey(t.Field(i)); k == key && k != "-" {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// fieldByPath finds the field at a dotted path such as "reconciler.backup.path".
func fieldByPath(v reflect.Value, path string) (reflect.Value, bool) {
	for key := range strings.SplitSeq(path, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		var ok bool
		if v, ok = fieldByKey(v, key); !ok {
			return reflect.Value{}, false
		}
	}
	return v, true
}
