package archdoc

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/architecture.md's import column from go list")

const module = "github.com/agentx-cli/agentx"

// docFile is the document, from this package's directory.
var docFile = filepath.Join("..", "..", "docs", "architecture.md")

// tableHeader starts the package table.
const tableHeader = "| Package | Owns | Imports (agentx packages) |"

// plumbing may be imported by every package (docs/architecture.md's
// "plumbing, imported where needed").
var plumbing = []string{
	"internal/atomicfile", "internal/safetext", "internal/clock", "internal/buildid",
	"internal/fstime", "internal/jsonscan", "internal/textsim", "internal/words",
	"internal/utczone",
}

// bottom is the design's "may import" column for the packages at the
// bottom of the core, the plumbing aside: they import nothing else of the
// module.
var bottom = map[string][]string{
	"ledger":            {"lock"},
	"lock":              {},
	"workflow":          {},
	"internal/eventlog": {"ledger"},
	"cmd/agentx":        {"internal/cli"},
}

// core packages never import what sits above the core: replication, the
// channels, the front ends, the gate's stateful parts, the workspace and
// the commands. (The hub does use the trust set, the context card and the
// scope rules, which import only the core and the plumbing.)
var core = []string{"router", "monitor", "ledger", "lock", "workflow", "internal/eventlog"}

// above is what the core must not import: a package or a prefix ("x/").
var above = []string{
	"internal/remote", "internal/channels/", "internal/frontends/", "internal/cli",
	"internal/workspace", "internal/doctor", "internal/setup",
	"internal/gate/evaluate", "internal/gate/proposal", "internal/gate/skills",
}

// isAbove reports whether p is one of above.
func isAbove(p string) bool {
	return slices.ContainsFunc(above, func(a string) bool {
		return p == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(p, a))
	})
}

// imports is every package of the module and the module's packages it
// imports (not its tests), from go list.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	got := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		pkg := rel(f[0])
		deps := []string{}
		for _, d := range f[1:] {
			if r := rel(d); r != d {
				deps = append(deps, r)
			}
		}
		slices.Sort(deps)
		got[pkg] = deps
	}
	return got
}

// rel is p relative to the module ("ledger"), or p unchanged when it is
// not one of the module's packages.
func rel(p string) string {
	if p == module {
		return "."
	}
	if r, ok := strings.CutPrefix(p, module+"/"); ok {
		return r
	}
	return p
}

// row is one line of the package table.
type row struct {
	line    int // index in the document's lines
	pkg     string
	owns    string
	imports []string
}

// table reads the package table of the document's lines.
func table(t *testing.T, lines []string) (rows []row, end int) {
	t.Helper()
	start := slices.Index(lines, tableHeader)
	if start < 0 {
		t.Fatalf("%s: no package table (a line %q)", docFile, tableHeader)
	}
	i := start + 2 // the header and its |---| line
	for ; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
		cells := strings.Split(strings.Trim(lines[i], "|"), " | ")
		if len(cells) != 3 {
			t.Fatalf("%s:%d: a row of the package table has %d cells, want 3: %q", docFile, i+1, len(cells), lines[i])
		}
		pkg := strings.Trim(strings.TrimSpace(cells[0]), "`")
		var deps []string
		if s := strings.TrimSpace(cells[2]); s != "none" {
			for d := range strings.SplitSeq(s, ",") {
				deps = append(deps, strings.TrimSpace(d))
			}
		}
		rows = append(rows, row{line: i, pkg: pkg, owns: strings.TrimSpace(cells[1]), imports: deps})
	}
	return rows, i
}

func (r row) String() string {
	deps := "none"
	if len(r.imports) > 0 {
		deps = strings.Join(r.imports, ", ")
	}
	return fmt.Sprintf("| `%s` | %s | %s |", r.pkg, r.owns, deps)
}

// TestImportTable: the document's table names every package, and each
// row's imports are the package's.
func TestImportTable(t *testing.T) {
	data, err := os.ReadFile(docFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	rows, end := table(t, lines)
	got := imports(t)

	var problems []string
	seen := map[string]bool{}
	var kept []row
	for _, r := range rows {
		deps, ok := got[r.pkg]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s:%d: package %s does not exist: remove its row", docFile, r.line+1, r.pkg))
			continue
		}
		seen[r.pkg] = true
		if !slices.Equal(r.imports, deps) {
			problems = append(problems, fmt.Sprintf("%s:%d: %s imports %s, the document says %s", docFile, r.line+1, r.pkg, list(deps), list(r.imports)))
			r.imports = deps
		}
		kept = append(kept, r)
	}
	var pkgs []string
	for p := range got {
		if !seen[p] {
			pkgs = append(pkgs, p)
		}
	}
	slices.Sort(pkgs)
	for _, p := range pkgs {
		problems = append(problems, fmt.Sprintf("%s: package %s has no row: add one saying what it owns", docFile, p))
		kept = append(kept, row{pkg: p, owns: "(what it owns)", imports: got[p]})
	}
	if len(problems) == 0 {
		return
	}
	if !*update {
		t.Fatalf("docs/architecture.md's package table is not the code's (go test ./internal/archdoc -update rewrites the imports):\n%s", strings.Join(problems, "\n"))
	}
	var b bytes.Buffer
	start := rows[0].line
	if len(rows) == 0 {
		start = end
	}
	for _, l := range lines[:start] {
		b.WriteString(l + "\n")
	}
	for _, r := range kept {
		b.WriteString(r.String() + "\n")
	}
	b.WriteString(strings.Join(lines[end:], "\n"))
	if err := os.WriteFile(docFile, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote %s:\n%s", docFile, strings.Join(problems, "\n"))
}

func list(deps []string) string {
	if len(deps) == 0 {
		return "none"
	}
	return strings.Join(deps, ", ")
}

// TestMayImport enforces the design's rules on the code itself.
func TestMayImport(t *testing.T) {
	got := imports(t)
	var problems []string
	for pkg, deps := range got {
		allowed, isBottom := bottom[pkg]
		for _, d := range deps {
			switch {
			case d == "internal/cli" && pkg != "cmd/agentx":
				problems = append(problems, fmt.Sprintf("%s imports internal/cli: only cmd/agentx may", pkg))
			case slices.Contains(core, pkg) && isAbove(d):
				problems = append(problems, fmt.Sprintf("%s imports %s: the core never imports replication, channels, front ends or commands", pkg, d))
			case isBottom && !slices.Contains(allowed, d) && !slices.Contains(plumbing, d):
				problems = append(problems, fmt.Sprintf("%s imports %s: the design allows it %s and the plumbing", pkg, d, list(allowed)))
			}
		}
	}
	slices.Sort(problems)
	if len(problems) > 0 {
		t.Fatalf("imports the design rules out:\n%s", strings.Join(problems, "\n"))
	}
}

// TestRulesNamePackages: the rules above name only packages that exist (a renamed package cannot leave a rule
// that checks nothing).
func TestRulesNamePackages(t *testing.T) {
	got := imports(t)
	var named []string
	for pkg, allowed := range bottom {
		named = append(append(named, pkg), allowed...)
	}
	named = append(append(append(named, core...), plumbing...), above...)
	for _, p := range named {
		_, ok := got[p]
		if !ok && strings.HasSuffix(p, "/") {
			ok = slices.ContainsFunc(slices.Collect(maps.Keys(got)), func(q string) bool { return strings.HasPrefix(q, p) })
		}
		if !ok {
			t.Errorf("a rule names %s, which is not a package: rename it in archdoc_test.go", p)
		}
	}
}

// TestNamesExist: every Go name the document gives in backquotes
// (`Hub.Ask`, `ledger.Store.Update`, `sideWork.then`, `runE`) is a
// function, method, type, field, variable or constant of the module, so
// the walk through the code cannot name what no longer exists.
func TestNamesExist(t *testing.T) {
	known := declared(t)
	data, err := os.ReadFile(docFile)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for i, line := range strings.Split(string(data), "\n") {
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			name := strings.TrimSuffix(m[1], "()")
			if file, fn, ok := strings.Cut(name, ": "); ok && strings.HasSuffix(file, ".go") {
				// the walk's "path/file.go: Func"
				src, err := os.ReadFile(filepath.Join("..", "..", file))
				if err != nil {
					missing = append(missing, fmt.Sprintf("%s:%d: `%s`: no file %s", docFile, i+1, m[1], file))
				} else if !declares(string(src), fn) {
					missing = append(missing, fmt.Sprintf("%s:%d: `%s`: %s does not declare %s", docFile, i+1, m[1], file, fn))
				}
				name = fn
			}
			if !goName.MatchString(name) || notGo(name) {
				continue
			}
			if !isDeclared(known, name) {
				missing = append(missing, fmt.Sprintf("%s:%d: `%s` is not a name in the code", docFile, i+1, m[1]))
			}
		}
	}
	if len(missing) > 0 {
		t.Fatalf("the document names what the code does not have (rename or remove it):\n%s", strings.Join(missing, "\n"))
	}
}

var (
	codeSpan = regexp.MustCompile("`([^`]+)`")
	allCaps  = regexp.MustCompile(`^[A-Z][A-Z0-9_]+$`)
	// external are the other libraries' names the document gives
	external = map[string]bool{"PersistentPreRunE": true, "ExecuteContext": true}
	// goName is a dotted Go name with at least one capital or a call, so
	// that plain words in backquotes (`ready`, `list`) are left alone
	goName = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*$`)
)

// notGo reports whether a backquoted name is something else than Go: a
// file name, a command word, a JSON key, a TOML table.
func notGo(name string) bool {
	if allCaps.MatchString(name) || strings.HasPrefix(name, "agentx.") || external[name] {
		return true // an environment variable or flag constant, a JSON member, another library's
	}
	parts := strings.Split(name, ".")
	last := parts[len(parts)-1]
	switch last {
	case "go", "json", "jsonl", "toml", "md", "txtar", "lock", "queue", "local", "layout", "sh", "yml", "yaml", "log":
		return true
	}
	if len(parts) == 1 {
		// a bare word names Go only when it has a capital inside or is a
		// known unexported function written with its receiver elsewhere
		return !strings.ContainsAny(name[1:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && !strings.ContainsAny(name[:1], "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
	}
	return false
}

// declared is every name the module's Go files declare (tests too: the
// document names test helpers), as the document may write it: Func,
// pkg.Func, Type, pkg.Type, Type.Method, pkg.Type.Method, Type.Field,
// pkg.Type.Field, a method or field by itself, one promoted from an
// embedded struct (App.later for sideWork.later), and a variable's method
// (fstime.Default.Settled).
func declared(t *testing.T) map[string]bool {
	t.Helper()
	known := map[string]bool{}
	vars := map[string]bool{}               // pkg.Var and Var
	embeds := map[string][]string{}         // Type: the types it embeds
	members := map[string]map[string]bool{} // Type: its methods and fields
	add := func(pkg string, names ...string) {
		n := strings.Join(names, ".")
		known[n] = true
		known[pkg+"."+n] = true
		if len(names) == 2 {
			known[names[1]] = true
			if members[names[0]] == nil {
				members[names[0]] = map[string]bool{}
			}
			members[names[0]][names[1]] = true
		}
	}
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := f.Name.Name
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					add(pkg, d.Name.Name)
					continue
				}
				add(pkg, recvName(d.Recv.List[0].Type), d.Name.Name)
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						add(pkg, s.Name.Name)
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, f := range st.Fields.List {
								if len(f.Names) == 0 {
									embeds[s.Name.Name] = append(embeds[s.Name.Name], recvName(f.Type))
								}
								for _, n := range f.Names {
									add(pkg, s.Name.Name, n.Name)
								}
							}
						}
						if it, ok := s.Type.(*ast.InterfaceType); ok {
							for _, m := range it.Methods.List {
								for _, n := range m.Names {
									add(pkg, s.Name.Name, n.Name)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							add(pkg, n.Name)
							vars[n.Name], vars[pkg+"."+n.Name] = true, true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// promoted members: App.later when App embeds sideWork, which has later
	var promote func(typ string, seen map[string]bool) map[string]bool
	promote = func(typ string, seen map[string]bool) map[string]bool {
		out := map[string]bool{}
		for _, e := range embeds[typ] {
			if seen[e] {
				continue
			}
			seen[e] = true
			for m := range members[e] {
				out[m] = true
			}
			for m := range promote(e, seen) {
				out[m] = true
			}
		}
		return out
	}
	for typ := range embeds {
		for m := range promote(typ, map[string]bool{typ: true}) {
			known[typ+"."+m] = true
		}
	}
	// a variable's member: Var.Method, pkg.Var.Method (noted as such, and
	// checked by isDeclared)
	for v := range vars {
		known[varMark+v] = true
	}
	return known
}

// varMark prefixes the variables in declared's map.
const varMark = "var:"

// declares reports whether the Go source src declares name's last part
// as a function, method or type.
func declares(src, name string) bool {
	last := name[strings.LastIndexByte(name, '.')+1:]
	return regexp.MustCompile(`(?m)^(func (\([^)]*\) )?` + regexp.QuoteMeta(last) + `[(\[]|type ` + regexp.QuoteMeta(last) + ` )`).MatchString(src)
}

// isDeclared reports whether name is in known, or is a variable's member
// (a variable, then a method or field of some type).
func isDeclared(known map[string]bool, name string) bool {
	if known[name] {
		return true
	}
	i := strings.LastIndexByte(name, '.')
	return i > 0 && known[varMark+name[:i]] && known[name[i+1:]]
}

// recvName is a method receiver's type name (without * or type
// parameters).
func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}
