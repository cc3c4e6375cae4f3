package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// argError is a bad argument to a tool: the model reads its sentence and
// can call again.
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

func argErr(format string, args ...any) error {
	return &argError{fmt.Sprintf(format, args...)}
}

// decodeArgs reads a tool's arguments (a JSON object; absent means {})
// into v, refusing arguments the tool does not take.
func decodeArgs(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	var ae *argError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &te):
		return argErr("argument %q must be %s, not %s", te.Field, kindOf(te.Type), te.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return argErr("unknown argument %s; this tool takes %s", strings.TrimPrefix(err.Error(), "json: unknown field "), fieldNames(v))
	}
	return argErr("bad arguments: %v", err)
}

func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint64, reflect.Uint32, reflect.Uint:
		return "a whole number"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(kindOf(t.Elem()), "a "), "an ") + "s"
	case reflect.Pointer:
		return kindOf(t.Elem())
	}
	return "a " + t.String()
}

// fieldNames lists the JSON names of the struct v points to.
func fieldNames(v any) string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	for i := range t.NumField() {
		if n, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); n != "" && n != "-" {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// commandArg is a command given as a string (a shell command line) or as
// an array (a program and its arguments).
type commandArg []string

// shellSafe are the characters of a command line that a split on blanks
// reads as the shell would.
const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@%+ "

func (c *commandArg) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		switch {
		case strings.TrimSpace(s) == "":
			*c = nil
		case strings.Trim(s, shellSafe) == "":
			*c = strings.Fields(s)
		default:
			*c = []string{"/bin/sh", "-c", s}
		}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return argErr("argument \"command\" must be a string (a shell command line) or an array of strings (a program and its arguments)")
	}
	if len(list) == 0 {
		return argErr("argument \"command\" is an empty array: give the program and its arguments, or leave command out for the user's shell")
	}
	if list[0] == "" {
		return argErr("argument \"command\": the program (its first item) is empty")
	}
	*c = list
	return nil
}
