package repo

import (
	"bufio"
	"bytes"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// APIFile is the file, relative to the root, that records module m's
// exported API: api/ratekit.txt for the root module, else its directory
// with dashes (api/store-redisstore.txt).
func APIFile(m Module) string {
	name := "ratekit"
	if m.Dir != "." {
		name = strings.ReplaceAll(m.Dir, "/", "-")
	}
	return filepath.Join("api", name+".txt")
}

// API returns the exported API of pkgs, packages of module m: one line per
// feature, sorted, in the manner of the Go project's api/*.txt. A feature
// is a package-level name with its type or signature, a method, an
// exported struct field or an interface method; parameter names are not
// part of it.
func API(root string, m Module, pkgs []string) ([]string, error) {
	exports, err := exportData(filepath.Join(root, filepath.FromSlash(m.Dir)), pkgs)
	if err != nil {
		return nil, err
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	var lines []string
	for _, p := range pkgs {
		pkg, err := imp.Import(p)
		if err != nil {
			return nil, fmt.Errorf("repo: reading the API of %s: %w", p, err)
		}
		lines = append(lines, packageAPI(pkg)...)
	}
	slices.Sort(lines)
	return slices.Compact(lines), nil
}

// exportData compiles pkgs and their dependencies in dir and returns each
// package's export data file.
func exportData(dir string, pkgs []string) (map[string]string, error) {
	args := append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("repo: go list -export in %s: %v\n%s", dir, err, stderr.String())
	}
	files := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			files[path] = file
		}
	}
	return files, sc.Err()
}

func packageAPI(pkg *types.Package) []string {
	qual := func(other *types.Package) string {
		if other == pkg {
			return ""
		}
		return other.Name()
	}
	typ := func(t types.Type) string { return types.TypeString(t, qual) }
	prefix := "pkg " + pkg.Path() + ", "
	var out []string
	add := func(format string, args ...any) { out = append(out, prefix+fmt.Sprintf(format, args...)) }
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			add("const %s %s = %s", name, typ(obj.Type()), obj.Val().ExactString())
		case *types.Var:
			add("var %s %s", name, typ(obj.Type()))
		case *types.Func:
			add("func %s%s", name, signature(obj.Type().(*types.Signature), typ))
		case *types.TypeName:
			out = append(out, typeAPI(prefix, obj, typ)...)
		}
	}
	return out
}

func typeAPI(prefix string, obj *types.TypeName, typ func(types.Type) string) []string {
	name := obj.Name()
	if obj.IsAlias() {
		return []string{prefix + "type " + name + " = " + typ(types.Unalias(obj.Type()))}
	}
	named := obj.Type().(*types.Named)
	head := prefix + "type " + name + typeParams(named.TypeParams(), typ)
	var out []string
	switch u := named.Underlying().(type) {
	case *types.Struct:
		out = append(out, head+" struct")
		for i := 0; i < u.NumFields(); i++ {
			f := u.Field(i)
			switch {
			case !f.Exported():
			case f.Embedded():
				out = append(out, head+" struct, embedded "+typ(f.Type()))
			default:
				out = append(out, head+" struct, "+f.Name()+" "+typ(f.Type()))
			}
		}
	case *types.Interface:
		out = append(out, head+" interface")
		for i := 0; i < u.NumMethods(); i++ {
			m := u.Method(i)
			if m.Exported() {
				out = append(out, head+" interface, "+m.Name()+signature(m.Type().(*types.Signature), typ))
			} else {
				out = append(out, head+" interface, unexported methods")
			}
		}
	default:
		out = append(out, head+" "+typ(u))
	}
	for i := 0; i < named.NumMethods(); i++ {
		m := named.Method(i)
		if !m.Exported() {
			continue
		}
		sig := m.Type().(*types.Signature)
		out = append(out, prefix+"method ("+typ(sig.Recv().Type())+") "+m.Name()+signature(sig, typ))
	}
	return out
}

// signature writes sig without parameter names: [type params](params) results.
func signature(sig *types.Signature, typ func(types.Type) string) string {
	var b strings.Builder
	b.WriteString(typeParams(sig.TypeParams(), typ))
	b.WriteString("(")
	for i := 0; i < sig.Params().Len(); i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		t := sig.Params().At(i).Type()
		if sig.Variadic() && i == sig.Params().Len()-1 {
			b.WriteString("..." + typ(t.(*types.Slice).Elem()))
		} else {
			b.WriteString(typ(t))
		}
	}
	b.WriteString(")")
	switch n := sig.Results().Len(); n {
	case 0:
	case 1:
		b.WriteString(" " + typ(sig.Results().At(0).Type()))
	default:
		b.WriteString(" (")
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(typ(sig.Results().At(i).Type()))
		}
		b.WriteString(")")
	}
	return b.String()
}

func typeParams(tps *types.TypeParamList, typ func(types.Type) string) string {
	if tps.Len() == 0 {
		return ""
	}
	var parts []string
	for i := 0; i < tps.Len(); i++ {
		tp := tps.At(i)
		parts = append(parts, tp.Obj().Name()+" "+typ(tp.Constraint()))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
