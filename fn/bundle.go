package fn

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// PackageError says why an upload was refused. Err is ErrInvalidPackage
// or ErrTooLarge; Reason is meant for the publisher.
type PackageError struct {
	Err    error
	Reason string
}

func (e *PackageError) Error() string { return e.Err.Error() + ": " + e.Reason }
func (e *PackageError) Unwrap() error { return e.Err }

func invalid(format string, args ...any) error {
	return &PackageError{Err: ErrInvalidPackage, Reason: fmt.Sprintf(format, args...)}
}

func tooLarge(format string, args ...any) error {
	return &PackageError{Err: ErrTooLarge, Reason: fmt.Sprintf(format, args...)}
}

// Upload formats.
const (
	FormatJS    = "js"     // a single CommonJS source file, stored as index.js
	FormatZip   = "zip"    // a .zip package
	FormatTarGz = "tar.gz" // a gzip-compressed tar package (npm pack makes these)
)

// Bundle is a function package as published: its files by clean relative
// path and the entry module.
type Bundle struct {
	Main  string            `json:"main"`
	Files map[string][]byte `json:"files"`
}

// size returns the summed size of the files.
func (b *Bundle) size() int {
	n := 0
	for _, f := range b.Files {
		n += len(f)
	}
	return n
}

// ParseUpload turns an uploaded body into a bundle: a single .js source,
// a .zip or a .tar.gz, told apart by their first bytes. Archives are
// extracted in memory, never to disk, and refused when a name is absolute
// or contains "..", a backslash or NUL, when an entry is a link or device,
// when a name repeats, or when the file count or unpacked size is over
// cfg. A single top-level directory holding every file (npm pack's
// "package/", GitHub's "repo-main/") is stripped. The entry is
// package.json's main (default index.js). Every .js file must compile and
// every .json file must parse. Failures wrap ErrInvalidPackage (or
// ErrTooLarge for size bounds) with a message meant for the publisher.
func ParseUpload(body []byte, cfg PackagesConfig) (*Bundle, string, error) {
	if len(body) > cfg.MaxUploadBytes {
		return nil, "", tooLarge("the upload is larger than %d bytes", cfg.MaxUploadBytes)
	}
	var (
		files  map[string][]byte
		format string
		err    error
	)
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return nil, "", invalid("the body is empty: send a .js source, a .zip or a .tar.gz")
	case bytes.HasPrefix(body, []byte("PK\x03\x04")), bytes.HasPrefix(body, []byte("PK\x05\x06")):
		format = FormatZip
		files, err = readZip(body, cfg)
	case bytes.HasPrefix(body, []byte{0x1f, 0x8b}):
		format = FormatTarGz
		files, err = readTarGz(body, cfg)
	default:
		format = FormatJS
		if !utf8.Valid(body) || bytes.IndexByte(body, 0) >= 0 {
			return nil, "", invalid("the body is neither JavaScript source (UTF-8 text) nor a .zip or .tar.gz archive")
		}
		files = map[string][]byte{"index.js": body}
	}
	if err != nil {
		return nil, "", err
	}
	if len(files) == 0 {
		return nil, "", invalid("the archive holds no files")
	}
	files = stripTopDir(files)
	main, err := findMain(files)
	if err != nil {
		return nil, "", err
	}
	if err := checkSources(files); err != nil {
		return nil, "", err
	}
	return &Bundle{Main: main, Files: files}, format, nil
}

// limits tracks what an archive may still hold.
type limits struct {
	cfg   PackagesConfig
	files int
	bytes int
}

func (l *limits) add(name string, size int64) error {
	l.files++
	if l.files > l.cfg.MaxFiles {
		return tooLarge("the package has more than %d files", l.cfg.MaxFiles)
	}
	if size < 0 || size > int64(l.cfg.MaxUnpackedBytes-l.bytes) {
		return tooLarge("the package unpacks to more than %d bytes (at %s)", l.cfg.MaxUnpackedBytes, name)
	}
	return nil
}

// read reads one entry's data, trusting no declared size.
func (l *limits) read(name string, r io.Reader) ([]byte, error) {
	room := l.cfg.MaxUnpackedBytes - l.bytes
	data, err := io.ReadAll(io.LimitReader(r, int64(room)+1))
	if err != nil {
		return nil, invalid("reading %s: %v", name, err)
	}
	if len(data) > room {
		return nil, tooLarge("the package unpacks to more than %d bytes (at %s)", l.cfg.MaxUnpackedBytes, name)
	}
	l.bytes += len(data)
	return data, nil
}

func readZip(body []byte, cfg PackagesConfig) (map[string][]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, invalid("not a readable zip archive: %v", err)
	}
	lim := limits{cfg: cfg}
	files := map[string][]byte{}
	for _, f := range zr.File {
		name, err := cleanName(f.Name)
		if err != nil {
			return nil, err
		}
		mode := f.Mode()
		switch {
		case mode.IsDir() || name == "":
			continue
		case mode&fs.ModeSymlink != 0:
			return nil, invalid("%s is a symbolic link; packages hold regular files only", f.Name)
		case !mode.IsRegular():
			return nil, invalid("%s is not a regular file", f.Name)
		}
		if _, dup := files[name]; dup {
			return nil, invalid("%s appears twice", name)
		}
		if err := lim.add(name, int64(min(f.UncompressedSize64, 1<<62))); err != nil {
			return nil, err
		}
		rc, err := f.Open()
		if err != nil {
			return nil, invalid("opening %s: %v", name, err)
		}
		data, err := lim.read(name, rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		files[name] = data
	}
	return files, nil
}

func readTarGz(body []byte, cfg PackagesConfig) (map[string][]byte, error) {
	gz, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, invalid("not a readable gzip stream: %v", err)
	}
	defer gz.Close()
	// Headers, padding and skipped entries are decompressed too: bound the
	// whole stream, not just the files kept.
	stream := &io.LimitedReader{R: gz, N: int64(cfg.MaxUnpackedBytes) + int64(cfg.MaxFiles)*2048 + 1<<20}
	tr := tar.NewReader(stream)
	lim := limits{cfg: cfg}
	files := map[string][]byte{}
	for entries := 0; ; entries++ {
		if entries > 2*cfg.MaxFiles {
			return nil, tooLarge("the archive has more than %d entries", 2*cfg.MaxFiles)
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if stream.N <= 0 {
				return nil, tooLarge("the archive unpacks to more than %d bytes", cfg.MaxUnpackedBytes)
			}
			return nil, invalid("not a readable tar archive: %v", err)
		}
		switch hdr.Typeflag {
		case tar.TypeXGlobalHeader:
			continue
		case tar.TypeDir:
			if _, err := cleanName(hdr.Name); err != nil {
				return nil, err
			}
			continue
		case tar.TypeReg:
		case tar.TypeSymlink, tar.TypeLink:
			return nil, invalid("%s is a link; packages hold regular files only", hdr.Name)
		default:
			return nil, invalid("%s is not a regular file (tar type %q)", hdr.Name, hdr.Typeflag)
		}
		name, err := cleanName(hdr.Name)
		if err != nil {
			return nil, err
		}
		if name == "" {
			continue
		}
		if _, dup := files[name]; dup {
			return nil, invalid("%s appears twice", name)
		}
		if err := lim.add(name, hdr.Size); err != nil {
			return nil, err
		}
		data, err := lim.read(name, tr)
		if err != nil {
			return nil, err
		}
		files[name] = data
	}
	return files, nil
}

// maxNameLen bounds a file name inside a package.
const maxNameLen = 512

// cleanName checks an archive entry name and returns it cleaned ("" for
// the archive root). Absolute names, "..", backslashes, NUL and drive
// letters are refused, not repaired.
func cleanName(name string) (string, error) {
	bad := func(why string) (string, error) {
		return "", invalid("entry %q: %s", name, why)
	}
	switch {
	case len(name) > maxNameLen:
		return bad(fmt.Sprintf("the name is longer than %d bytes", maxNameLen))
	case strings.HasPrefix(name, "/"):
		return bad("absolute paths are not allowed")
	case strings.ContainsAny(name, "\\\x00"):
		return bad("backslashes and NUL are not allowed in names")
	case len(name) >= 2 && name[1] == ':':
		return bad("drive letters are not allowed")
	case !utf8.ValidString(name):
		return bad("the name is not UTF-8")
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return bad(`".." is not allowed in names`)
		}
	}
	c := path.Clean(name)
	if c == "." {
		return "", nil
	}
	if !fs.ValidPath(c) {
		return bad("not a valid relative path")
	}
	return c, nil
}

// stripTopDir removes a directory every file sits in, when the root holds
// nothing else.
func stripTopDir(files map[string][]byte) map[string][]byte {
	top := ""
	for name := range files {
		dir, _, ok := strings.Cut(name, "/")
		if !ok || (top != "" && dir != top) {
			return files
		}
		top = dir
	}
	out := make(map[string][]byte, len(files))
	for name, data := range files {
		out[strings.TrimPrefix(name, top+"/")] = data
	}
	return out
}

// findMain resolves the entry module: package.json's main (with Node's
// .js, .json and /index.js completions), else index.js.
func findMain(files map[string][]byte) (string, error) {
	main := "index.js"
	if pj, ok := files["package.json"]; ok {
		var p struct {
			Main *string `json:"main"`
		}
		if err := json.Unmarshal(pj, &p); err != nil {
			return "", invalid("package.json: %v", err)
		}
		if p.Main != nil && strings.TrimSpace(*p.Main) != "" {
			m, err := cleanName(strings.TrimSpace(*p.Main))
			if err != nil || m == "" {
				return "", invalid("package.json main %q must name a file inside the package", *p.Main)
			}
			for _, cand := range []string{m, m + ".js", m + ".json", m + "/index.js"} {
				if _, ok := files[cand]; ok {
					return cand, nil
				}
			}
			return "", invalid("package.json main %q is not in the package", *p.Main)
		}
	}
	if _, ok := files[main]; !ok {
		names := slices.Sorted(maps.Keys(files))
		if len(names) > 5 {
			names = append(names[:5], "…")
		}
		return "", invalid("the package has no index.js and package.json names no main (files: %s)", strings.Join(names, ", "))
	}
	return main, nil
}

// checkSources compiles every .js file the way require wraps it and
// parses every .json file, so that a broken package is refused when it
// is published rather than when it is first called.
func checkSources(files map[string][]byte) error {
	for _, name := range slices.Sorted(maps.Keys(files)) {
		data := files[name]
		switch path.Ext(name) {
		case ".js", ".cjs":
			if !utf8.Valid(data) {
				return invalid("%s is not UTF-8 text", name)
			}
			// Source maps are never read here: a sourceMappingURL comment
			// would make the parser read a host file.
			ast, err := goja.Parse(name, wrapModule(string(data)), parser.WithDisableSourceMaps)
			if err == nil {
				_, err = goja.CompileAST(ast, false)
			}
			if err != nil {
				return invalid("%s does not compile: %v", name, err)
			}
		case ".json":
			if !json.Valid(data) {
				return invalid("%s is not valid JSON", name)
			}
		}
	}
	return nil
}

// wrapModule is how goja_nodejs's require wraps a module's source.
func wrapModule(src string) string {
	return "(function(exports,require,module,__filename,__dirname){" + src + "\n})"
}
