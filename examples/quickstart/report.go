package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"purra.dev/purramcp"
)

// call runs the registration named name once and prints its outcome and how
// many tools/call requests reached the server. Known failures are results
// with an ErrorCode; an error is only ErrCanceled or a host scope failure.
func call(ctx context.Context, w io.Writer, server *docsServer, catalog *purramcp.Catalog,
	name, args string, tc purramcp.ToolContext) error {
	tool, ok := catalog.Registration(name)
	if !ok {
		return fmt.Errorf("no registration %s", name)
	}
	sent := server.calls.Load()
	res, err := tool.Run(ctx, json.RawMessage(args), tc)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	fmt.Fprintf(w, "   %s %s\n", name, args)
	if res.ErrorCode != "" {
		fmt.Fprintf(w, "     -> %s, %d tools/call sent\n", res.ErrorCode, server.calls.Load()-sent)
		// The model gets only the code; the host may ask the contract why.
		var ce *purramcp.ContractError
		if _, err := tool.ArgumentContract.Parse(args); errors.As(err, &ce) {
			fmt.Fprintf(w, "        (host-side detail: %s at %s)\n", ce.Keyword, ce.Path)
		}
		return nil
	}
	envelope, err := json.Marshal(res.Content)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "     -> ok, %d tools/call sent\n        %s\n", server.calls.Load()-sent, envelope)
	return nil
}

// changes describes, one line per local name, what DiffSnapshots found
// between two snapshots: the entries added or removed and the fields that
// changed.
func changes(before, after purramcp.Snapshot) []string {
	var out []string
	for _, c := range purramcp.DiffSnapshots(before, after) {
		name := cmp.Or(c.LocalName, "snapshot")
		if c.Kind == purramcp.ChangeChanged {
			out = append(out, name+": "+strings.Join(c.Fields, ", "))
		} else {
			out = append(out, name+" "+c.Kind)
		}
	}
	return out
}

// writeJSON writes v, compact JSON, indenting objects and arrays down to
// depth levels and writing deeper values on one line, so that each schema
// of a snapshot stays on one line. Members keep their order.
func writeJSON(w io.Writer, v json.RawMessage, indent string, depth int) error {
	if depth == 0 || (v[0] != '{' && v[0] != '[') {
		_, err := w.Write(v)
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	open, err := dec.Token()
	if err != nil {
		return err
	}
	object := open == json.Delim('{')
	fmt.Fprint(w, open)
	for n := 0; dec.More(); n++ {
		if n > 0 {
			fmt.Fprint(w, ",")
		}
		fmt.Fprint(w, "\n"+indent+"  ")
		if object {
			key, err := dec.Token()
			if err != nil {
				return err
			}
			name, _ := json.Marshal(key)
			fmt.Fprintf(w, "%s: ", name)
		}
		var elem json.RawMessage
		if err := dec.Decode(&elem); err != nil {
			return err
		}
		if err := writeJSON(w, elem, indent+"  ", depth-1); err != nil {
			return err
		}
	}
	end := "]"
	if object {
		end = "}"
	}
	_, err = fmt.Fprint(w, "\n"+indent+end)
	return err
}
