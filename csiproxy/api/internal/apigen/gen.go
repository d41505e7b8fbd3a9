package apigen

import (
	"fmt"
	"go/format"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// group is one API group merged across its versions.
type group struct {
	name     string
	versions []*version
	// canonical messages: name -> fields in order, with internal types
	internal map[string][]field
	order    []string
	// canonical methods -> request/response canonical names
	methods map[string][2]string
}

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

var _ = title

func (g *group) msgCanon(v *version, name string) string {
	for _, m := range v.methods {
		switch name {
		case m.req:
			return m.canon + "Request"
		case m.resp:
			return m.canon + "Response"
		}
	}
	return name
}

func (g *group) fieldCanon(msgCanon, name string) string {
	if a, ok := fieldAlias[g.name][msgCanon+"."+name]; ok {
		return a
	}
	if a, ok := fieldAlias[g.name]["*."+name]; ok {
		return a
	}
	return name
}

// isErrorField: the Error string older responses carry; csi-proxy v1
// answers every error as a gRPC status, on every version, and so does the
// simulated host.
func isErrorField(msgCanon string, f field) bool {
	return strings.HasSuffix(msgCanon, "Response") && f.name == "Error" && f.t.kind == "basic" && f.t.name == "string"
}

func merge(name string, versions []*version) (*group, error) {
	g := &group{name: name, versions: versions, internal: map[string][]field{}, methods: map[string][2]string{}}
	for _, v := range versions {
		for i, m := range v.methods {
			c := m.name
			if a, ok := methodAlias[name][c]; ok {
				c = a
			}
			v.methods[i].canon = c
			g.methods[c] = [2]string{c + "Request", c + "Response"}
		}
		for _, m := range v.messages {
			m.canon = g.msgCanon(v, m.name)
			for i := range m.fields {
				m.fields[i].canon = g.fieldCanon(m.canon, m.fields[i].name)
			}
		}
	}
	// newest version first decides each canonical field's type
	for i := len(versions) - 1; i >= 0; i-- {
		v := versions[i]
		names := make([]string, 0, len(v.messages))
		for n := range v.messages {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			m := v.messages[n]
			if _, seen := g.internal[m.canon]; !seen {
				g.order = append(g.order, m.canon)
				g.internal[m.canon] = nil
			}
			for _, f := range m.fields {
				if isErrorField(m.canon, f) || hasField(g.internal[m.canon], f.canon) {
					continue
				}
				g.internal[m.canon] = append(g.internal[m.canon], field{name: f.canon, canon: f.canon, t: g.internalType(v, f.t)})
			}
		}
	}
	sort.Strings(g.order)
	return g, nil
}

func hasField(fs []field, name string) bool {
	for _, f := range fs {
		if f.name == name {
			return true
		}
	}
	return false
}

func (g *group) internalType(v *version, t *typ) *typ {
	switch t.kind {
	case "enum":
		return &typ{kind: "basic", name: "int32"}
	case "msg":
		return &typ{kind: "msg", name: exported(g.name) + g.msgCanon(v, t.name)}
	case "slice":
		return &typ{kind: "slice", elem: g.internalType(v, t.elem)}
	case "map":
		return &typ{kind: "map", key: g.internalType(v, t.key), elem: g.internalType(v, t.elem)}
	}
	return t
}

func (g *group) internalField(msgCanon, name string) (field, bool) {
	for _, f := range g.internal[msgCanon] {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

// pkgAlias is the import name of a version's stubs, e.g. filesystemv1beta1.
func pkgAlias(v *version) string { return v.group + v.name }

// exported is a group's exported prefix, e.g. Filesystem.
func exported(g string) string { return title(g) }

// serverType and clientType are a version's adapter types.
func serverType(v *version) string { return v.group + title(v.name) + "Server" }
func clientType(v *version) string { return v.group + title(v.name) + "Client" }

// internalName is the exported version-neutral type of a canonical message.
func (g *group) internalName(canon string) string { return exported(g.name) + canon }

// writer accumulates a generated file.
type writer struct {
	strings.Builder
	tmp int
}

func (w *writer) p(format string, args ...any) { fmt.Fprintf(&w.Builder, format+"\n", args...) }

func (w *writer) v() string { w.tmp++; return fmt.Sprintf("x%d", w.tmp) }

// versionedType spells t in a version's package.
func versionedType(v *version, t *typ) string {
	switch t.kind {
	case "enum":
		return pkgAlias(v) + "." + t.name
	case "msg":
		return "*" + pkgAlias(v) + "." + t.name
	case "slice":
		return "[]" + versionedType(v, t.elem)
	case "map":
		return "map[" + versionedType(v, t.key) + "]" + versionedType(v, t.elem)
	}
	return t.name
}

func internalTypeName(t *typ) string {
	switch t.kind {
	case "msg":
		return "*" + t.name
	case "slice":
		return "[]" + internalTypeName(t.elem)
	case "map":
		return "map[" + internalTypeName(t.key) + "]" + internalTypeName(t.elem)
	}
	return t.name
}

// errRE finds a use of the err variable.
var errRE = regexp.MustCompile(`\berr\b`)

func numeric(name string) bool { return name != "string" && name != "bool" }

// assign writes dst = src converted from type from to type to; toType
// spells the destination type; conv names the converter of a message.
func (g *group) assign(w *writer, dst, src string, from, to *typ, toType func(*typ) string, conv func(from, to *typ) string, fieldName string) {
	switch {
	case from.kind == "basic" && to.kind == "basic" && from.name == to.name:
		w.p("%s = %s", dst, src)
	case from.kind == "basic" && to.kind == "basic" && from.name == "string" && numeric(to.name):
		x := w.v()
		bits := strings.TrimLeft(to.name, "uint")
		parse := "ParseInt"
		if strings.HasPrefix(to.name, "uint") {
			parse = "ParseUint"
		}
		w.p("%s, perr := strconv.%s(%s, 10, %s)", x, parse, src, bits)
		w.p("if perr != nil { return nil, status.Errorf(codes.InvalidArgument, \"%s: %%v\", perr) }", fieldName)
		w.p("%s = %s(%s)", dst, to.name, x)
	case from.kind == "basic" && to.kind == "basic" && numeric(from.name) && to.name == "string":
		if strings.HasPrefix(from.name, "uint") {
			w.p("%s = strconv.FormatUint(uint64(%s), 10)", dst, src)
		} else {
			w.p("%s = strconv.FormatInt(int64(%s), 10)", dst, src)
		}
	case (from.kind == "basic" || from.kind == "enum") && (to.kind == "basic" || to.kind == "enum"):
		w.p("%s = %s(%s)", dst, toType(to), src)
	case from.kind == "msg" && to.kind == "msg":
		w.p("if %s, err = %s(%s); err != nil { return nil, err }", dst, conv(from, to), src)
	case from.kind == "slice" && to.kind == "slice":
		i, x := w.v(), w.v()
		w.p("if %s != nil {", src)
		w.p("%s = make(%s, len(%s))", dst, toType(to), src)
		w.p("for %s, %s := range %s {", i, x, src)
		g.assign(w, dst+"["+i+"]", x, from.elem, to.elem, toType, conv, fieldName)
		w.p("}")
		w.p("}")
	case from.kind == "map" && to.kind == "map":
		k, x, kk, vv := w.v(), w.v(), w.v(), w.v()
		w.p("if %s != nil {", src)
		w.p("%s = make(%s, len(%s))", dst, toType(to), src)
		w.p("for %s, %s := range %s {", k, x, src)
		w.p("var %s %s", kk, toType(to.key))
		g.assign(w, kk, k, from.key, to.key, toType, conv, fieldName)
		w.p("var %s %s", vv, toType(to.elem))
		g.assign(w, vv, x, from.elem, to.elem, toType, conv, fieldName)
		w.p("%s[%s] = %s", dst, kk, vv)
		w.p("}")
		w.p("}")
	default:
		panic(fmt.Sprintf("apigen: %s %s: cannot convert %s to %s", g.name, fieldName, from, to))
	}
}

// converters writes the functions converting every message reachable
// from roots: toInternal (versioned to version-neutral) or back.
func (g *group) converters(w *writer, v *version, roots []string, toInternal bool) {
	seen := map[string]bool{}
	queue := append([]string(nil), roots...)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		m := v.messages[name]
		in, vt := g.internalName(m.canon), pkgAlias(v)+"."+name
		fn := convName(v, name, toInternal)
		if toInternal {
			w.p("func %s(in *%s) (*%s, error) {", fn, vt, in)
			w.p("out := &%s{}", in)
		} else {
			w.p("func %s(in *%s) (*%s, error) {", fn, in, vt)
			w.p("out := &%s{}", vt)
		}
		w.p("if in == nil { return out, nil }")
		mark := w.Len()
		for _, f := range m.fields {
			if isErrorField(m.canon, f) {
				continue
			}
			inf, ok := g.internalField(m.canon, f.canon)
			if !ok {
				panic("apigen: no internal field " + m.canon + "." + f.canon)
			}
			collectMsgs(f.t, &queue)
			if toInternal {
				g.assign(w, "out."+inf.name, "in."+f.name, f.t, inf.t, internalTypeName,
					func(from, _ *typ) string { return convName(v, from.name, true) }, f.name)
			} else {
				g.assign(w, "out."+f.name, "in."+inf.name, inf.t, f.t, func(t *typ) string { return versionedType(v, t) },
					func(_, to *typ) string { return convName(v, to.name, false) }, f.name)
			}
		}
		if all := w.String(); errRE.MatchString(all[mark:]) {
			w.Builder.Reset()
			w.WriteString(all[:mark] + "var err error\n" + all[mark:])
		}
		w.p("return out, nil")
		w.p("}")
		w.p("")
	}
}

// convName names the converter of a version's message, e.g.
// filesystemV1beta1LinkPathRequestIn.
func convName(v *version, msg string, toInternal bool) string {
	if toInternal {
		return v.group + title(v.name) + msg + "In"
	}
	return v.group + title(v.name) + msg + "Out"
}

func collectMsgs(t *typ, q *[]string) {
	switch t.kind {
	case "msg":
		*q = append(*q, t.name)
	case "slice":
		collectMsgs(t.elem, q)
	case "map":
		collectMsgs(t.key, q)
		collectMsgs(t.elem, q)
	}
}

func (g *group) sortedMethods() []string {
	methods := make([]string, 0, len(g.methods))
	for m := range g.methods {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	return methods
}

// file writes one group's generated file.
func (g *group) file(clientVersion string) ([]byte, error) {
	w := &writer{}
	G := exported(g.name)
	methods := g.sortedMethods()
	w.p("// %sHandler serves the %s API of every version: the server", G, g.name)
	w.p("// adapter of a version converts its messages to these and calls it with")
	w.p("// the version's name.")
	w.p("type %sHandler interface {", G)
	for _, m := range methods {
		w.p("%s(ctx context.Context, r *%s%sRequest, version string) (*%s%sResponse, error)", m, G, m, G, m)
	}
	w.p("}")
	w.p("")
	w.p("// %sClient calls the %s API of one version (New%sClient); a", G, g.name, G)
	w.p("// method the version lacks answers UNIMPLEMENTED without a call.")
	w.p("type %sClient interface {", G)
	for _, m := range methods {
		w.p("%s(ctx context.Context, r *%s%sRequest) (*%s%sResponse, error)", m, G, m, G, m)
	}
	w.p("}")
	w.p("")
	for _, name := range g.order {
		w.p("// %s%s is the version-neutral %s.", G, name, name)
		w.p("type %s%s struct {", G, name)
		for _, f := range g.internal[name] {
			w.p("%s %s", f.name, internalTypeName(f.t))
		}
		w.p("}")
		w.p("")
	}
	w.p("// New%sClient is the %s client of one version, nil for a version", G, g.name)
	w.p("// this package does not know.")
	w.p("func New%sClient(cc *grpc.ClientConn, version string) %sClient {", G, G)
	w.p("switch version {")
	for _, v := range g.versions {
		w.p("case %q:", v.name)
		w.p("return &%s{c: %s.New%sClient(cc)}", clientType(v), pkgAlias(v), v.service)
	}
	w.p("}")
	w.p("return nil")
	w.p("}")
	w.p("")
	for _, v := range g.versions {
		st, ct := serverType(v), clientType(v)
		have := map[string]method{}
		var reqs, resps []string
		for _, m := range v.methods {
			have[m.canon] = m
			reqs, resps = append(reqs, m.req), append(resps, m.resp)
		}
		w.p("// %s serves %s %s on a %sHandler.", st, v.group, v.name, G)
		w.p("type %s struct {", st)
		w.p("%s.Unimplemented%sServer", pkgAlias(v), v.service)
		w.p("h %sHandler", G)
		w.p("}")
		w.p("")
		for _, m := range v.methods {
			w.p("func (a *%s) %s(ctx context.Context, in *%s.%s) (*%s.%s, error) {", st, m.name, pkgAlias(v), m.req, pkgAlias(v), m.resp)
			w.p("r, err := %s(in)", convName(v, m.req, true))
			w.p("if err != nil { return nil, err }")
			w.p("out, err := a.h.%s(ctx, r, %q)", m.canon, v.name)
			w.p("if err != nil { return nil, err }")
			w.p("return %s(out)", convName(v, m.resp, false))
			w.p("}")
			w.p("")
		}
		w.p("// %s calls %s %s.", ct, v.group, v.name)
		w.p("type %s struct{ c %s.%sClient }", ct, pkgAlias(v), v.service)
		w.p("")
		for _, mc := range methods {
			w.p("func (a *%s) %s(ctx context.Context, r *%s%sRequest) (*%s%sResponse, error) {", ct, mc, G, mc, G, mc)
			m, ok := have[mc]
			if !ok {
				w.p("return nil, status.Error(codes.Unimplemented, %q)", g.name+" "+v.name+" has no "+mc)
				w.p("}")
				w.p("")
				continue
			}
			w.p("in, err := %s(r)", convName(v, m.req, false))
			w.p("if err != nil { return nil, err }")
			w.p("out, err := a.c.%s(ctx, in)", m.name)
			w.p("if err != nil { return nil, err }")
			w.p("return %s(out)", convName(v, m.resp, true))
			w.p("}")
			w.p("")
		}
		g.converters(w, v, append(append([]string(nil), reqs...), resps...), true)
		g.converters(w, v, append(append([]string(nil), reqs...), resps...), false)
	}
	body := w.String()
	h := &writer{}
	h.p("// Code generated by apigen from %s %s. DO NOT EDIT.", ClientModule, clientVersion)
	h.p("")
	h.p("package api")
	h.p("")
	h.p("import (")
	h.p(`"context"`)
	if strings.Contains(body, "strconv.") {
		h.p(`"strconv"`)
	}
	h.p(`"google.golang.org/grpc"`)
	if strings.Contains(body, "codes.") {
		h.p(`"google.golang.org/grpc/codes"`)
		h.p(`"google.golang.org/grpc/status"`)
	}
	for _, v := range g.versions {
		h.p(`%s "%s/api/%s/%s"`, pkgAlias(v), ClientModule, v.group, v.name)
	}
	h.p(")")
	h.p("")
	src, err := format.Source([]byte(h.String() + body))
	if err != nil {
		return nil, fmt.Errorf("apigen: formatting %s: %v", g.name, err)
	}
	return src, nil
}

// index writes the table of every group version.
func index(groups []*group, clientVersion string) ([]byte, error) {
	w := &writer{}
	w.p("// Code generated by apigen from %s %s. DO NOT EDIT.", ClientModule, clientVersion)
	w.p("")
	w.p("package api")
	w.p("")
	w.p(`import "google.golang.org/grpc"`)
	w.p("")
	w.p("// ClientVersion is the release of %s the adapters were", ClientModule)
	w.p("// generated from.")
	w.p("const ClientVersion = %q", clientVersion)
	w.p("")
	w.p("// Handlers are the version-neutral handlers of every group.")
	w.p("type Handlers struct {")
	for _, g := range groups {
		w.p("%s %sHandler", exported(g.name), exported(g.name))
	}
	w.p("}")
	w.p("")
	w.p("// Versions is every group version of %s %s: its", ClientModule, clientVersion)
	w.p("// methods by their version-neutral names (and the name in this version),")
	w.p("// and how to serve it.")
	w.p("var Versions = []GroupVersion{")
	for _, g := range groups {
		for _, v := range g.versions {
			var ms []string
			for _, m := range v.methods {
				ms = append(ms, fmt.Sprintf("{%q, %q}", m.canon, m.name))
			}
			w.p("{Group: %q, Version: %q, Methods: []Method{%s},", v.group, v.name, strings.Join(ms, ", "))
			w.p("register: func(s *grpc.Server, h Handlers) { %s.Register%sServer(s, &%s{h: h.%s}) }},", pkgAlias(v), v.service, serverType(v), exported(g.name))
		}
	}
	w.p("}")
	src := w.String()
	var imports []string
	for _, g := range groups {
		for _, v := range g.versions {
			imports = append(imports, fmt.Sprintf(`%s "%s/api/%s/%s"`, pkgAlias(v), ClientModule, v.group, v.name))
		}
	}
	src = strings.Replace(src, `import "google.golang.org/grpc"`, "import (\n\"google.golang.org/grpc\"\n"+strings.Join(imports, "\n")+"\n)", 1)
	return format.Source([]byte(src))
}

// Generate reads the client module in clientDir (its version is the
// directory's @suffix) and returns the generated files by name.
func Generate(clientDir string) (map[string][]byte, error) {
	clientVersion := "unknown"
	if _, v, ok := strings.Cut(filepath.Base(clientDir), "@"); ok {
		clientVersion = v
	}
	all, err := readModule(clientDir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	out := map[string][]byte{}
	var groups []*group
	for _, n := range names {
		g, err := merge(n, all[n])
		if err != nil {
			return nil, err
		}
		src, err := g.file(clientVersion)
		if err != nil {
			return nil, err
		}
		out[n+"_generated.go"] = src
		groups = append(groups, g)
	}
	idx, err := index(groups, clientVersion)
	if err != nil {
		return nil, err
	}
	out["versions_generated.go"] = idx
	return out, nil
}
