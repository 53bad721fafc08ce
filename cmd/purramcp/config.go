package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"strings"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// A fileError is a config or lock file that cannot be used: it names the
// file, the JSON path when there is one, and what to do.
type fileError struct {
	file, path, reason, todo string
}

// Error returns "FILE: PATH: REASON; WHAT TO DO".
func (e *fileError) Error() string {
	s := e.file + ": "
	if e.path != "" {
		s += e.path + ": "
	}
	s += e.reason
	if e.todo != "" {
		s += "; " + e.todo
	}
	return s
}

// asFileError describes err from reading or parsing file: a
// fleet.ConfigError by its JSON path, an os error by its kind. todo says
// what to do about a file that is there but wrong.
func asFileError(file string, err error, todo string) *fileError {
	var ce *fleet.ConfigError
	var pe *fs.PathError
	switch {
	case errors.As(err, &ce):
		return &fileError{file: file, path: ce.Path, reason: ce.Reason, todo: todo}
	case errors.Is(err, fs.ErrNotExist):
		return &fileError{file: file, reason: "no such file", todo: "check the path"}
	case errors.As(err, &pe):
		return &fileError{file: file, reason: pe.Err.Error()}
	}
	return &fileError{file: file, reason: clean(err.Error())}
}

// A config is a checked config file and the values it takes from the
// environment, which no output may show.
type config struct {
	*fleet.Config
	secrets []string
}

// loadConfig reads and checks the config file at path.
func loadConfig(path string) (*config, error) {
	cfg, err := fleet.LoadConfig(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &fileError{file: path, reason: "no such file",
			todo: "create it (`purramcp inspect --suggest` prints the tools of a server entry) or name another with --config"}
	case err != nil:
		return nil, asFileError(path, err, "fix that entry (the README describes every field)")
	}
	return &config{Config: cfg, secrets: cfg.Secrets()}, nil
}

// loadLock reads the lock file at path; a missing file is an empty lock.
// A malformed file, or a digest that does not match its snapshot (an edit
// by hand), is an error.
func loadLock(path string) (*fleet.Lock, error) {
	lock, err := fleet.LoadLock(path)
	if err != nil {
		return nil, asFileError(path, err,
			"the lock file was edited or damaged: restore it from version control, or delete it and run `purramcp lock` to approve the live catalogs again")
	}
	return lock, nil
}

// serverEndpoint returns how to reach the server sc describes; secrets are
// never shown.
func serverEndpoint(sc fleet.ServerConfig, secrets []string) endpoint {
	ep := endpoint{sc: sc, hidden: slices.Clone(secrets)}
	if u, err := url.Parse(sc.URL); err == nil && u.RawQuery != "" {
		ep.hidden = append(ep.hidden, u.RawQuery) // a query may carry a key
	}
	return ep
}

// resolveLimits gives every zero field of l its default, as discovery does.
func resolveLimits(l purramcp.Limits) purramcp.Limits {
	d := purramcp.DefaultLimits()
	pick := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	l.MaxPages = pick(l.MaxPages, d.MaxPages)
	l.MaxTools = pick(l.MaxTools, d.MaxTools)
	l.MaxCatalogBytes = pick(l.MaxCatalogBytes, d.MaxCatalogBytes)
	l.MaxSchemaBytes = pick(l.MaxSchemaBytes, d.MaxSchemaBytes)
	l.MaxDescriptionBytes = pick(l.MaxDescriptionBytes, d.MaxDescriptionBytes)
	l.MaxResultBytes = pick(l.MaxResultBytes, d.MaxResultBytes)
	l.MaxContentBlocks = pick(l.MaxContentBlocks, d.MaxContentBlocks)
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	return l
}

// configTarget returns the inspect target of server id in the config at
// path: its endpoint, policy, limits, requireReadOnlyHint and bindings, and
// the local names its other servers use.
func configTarget(path, id string) (*inspectTarget, error) {
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	sc, ok := cfg.Servers[id]
	if !ok {
		return nil, &fileError{file: path, path: "servers", reason: fmt.Sprintf("no server %q", id),
			todo: "name one of " + strings.Join(sortedKeys(cfg.Servers), ", ")}
	}
	t := &inspectTarget{id: id, ep: serverEndpoint(sc, cfg.secrets), policy: sc.SchemaPolicy(), limits: resolveLimits(sc.Limits),
		readOnly: sc.RequireReadOnlyHint, bound: map[string]boundTool{}, taken: map[string]bool{}}
	for remote, tc := range sc.Tools {
		t.bound[remote] = boundTool{As: tc.As, Title: tc.Title, ConcurrencySafe: tc.ConcurrencySafe}
	}
	for other, osc := range cfg.Servers {
		if other != id {
			for _, tc := range osc.Tools {
				t.taken[tc.As] = true
			}
		}
	}
	return t, nil
}
