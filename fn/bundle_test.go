package fn

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseUpload(t *testing.T) {
	t.Parallel()
	stripe := testdataFiles(t, "verify-stripe")
	prefixed := map[string]string{}
	for name, data := range stripe {
		prefixed["package/"+name] = data // npm pack's layout
	}
	cfg := DefaultPackagesConfig()
	tests := []struct {
		name       string
		body       []byte
		wantFormat string
		wantMain   string
		wantFiles  []string
	}{
		{"single source", []byte("exports.main = (i, cb) => cb(1, null);"), FormatJS, "index.js", []string{"index.js"}},
		{"zip with package.json main", zipOf(t, stripe, nil), FormatZip, "src/main.js", []string{"package.json", "src/main.js", "src/signature.js"}},
		{"tar.gz", tarGz(t, stripe, nil), FormatTarGz, "src/main.js", []string{"package.json", "src/main.js", "src/signature.js"}},
		{"npm pack prefix stripped", tarGz(t, prefixed, nil), FormatTarGz, "src/main.js", []string{"package.json", "src/main.js", "src/signature.js"}},
		{"./ names and directories", tarGz(t, nil, []tarEntry{
			{hdr: tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755}},
			{hdr: tar.Header{Name: "./lib/", Typeflag: tar.TypeDir, Mode: 0o755}},
			{hdr: tar.Header{Name: "./index.js", Typeflag: tar.TypeReg, Mode: 0o644}, data: "exports.main = () => 1;"},
			{hdr: tar.Header{Name: "./lib/a.js", Typeflag: tar.TypeReg, Mode: 0o644}, data: "module.exports = 1;"},
		}), FormatTarGz, "index.js", []string{"index.js", "lib/a.js"}},
		{"main without extension", zipOf(t, map[string]string{"package.json": `{"main":"./lib/start"}`, "lib/start.js": "exports.main = () => 1;"}, nil), FormatZip, "lib/start.js", []string{"lib/start.js", "package.json"}},
		{"main naming a directory", zipOf(t, map[string]string{"package.json": `{"main":"lib"}`, "lib/index.js": "exports.main = () => 1;"}, nil), FormatZip, "lib/index.js", []string{"lib/index.js", "package.json"}},
		{"empty main means index.js", zipOf(t, map[string]string{"package.json": `{"name":"x","main":""}`, "index.js": "exports.main = () => 1;"}, nil), FormatZip, "index.js", []string{"index.js", "package.json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, format, err := ParseUpload(tc.body, cfg)
			if err != nil {
				t.Fatalf("ParseUpload: %v", err)
			}
			got := slices.Sorted(maps.Keys(b.Files))
			if d := cmp.Diff(tc.wantFiles, got); d != "" || format != tc.wantFormat || b.Main != tc.wantMain {
				t.Errorf("format %s, main %s, files (-want +got):\n%s", format, b.Main, d)
			}
		})
	}
}

func TestParseUploadRefuses(t *testing.T) {
	t.Parallel()
	small := DefaultPackagesConfig()
	small.MaxFiles = 3
	small.MaxUnpackedBytes = 100
	small.MaxUploadBytes = 64 << 10
	index := map[string]string{"index.js": "exports.main = () => 1;"}
	many := map[string]string{"index.js": "1", "a.js": "1", "b.js": "1", "c.js": "1"}
	symlink := zip.FileHeader{Name: "link.js"}
	symlink.SetMode(fs.ModeSymlink | 0o777)
	var bomb bytes.Buffer // 10 MB of zeros, a few KB compressed
	func() {
		gz := gzip.NewWriter(&bomb)
		tw := tar.NewWriter(gz)
		_ = tw.WriteHeader(&tar.Header{Name: "index.js", Typeflag: tar.TypeReg, Mode: 0o644, Size: 10 << 20})
		_, _ = tw.Write(make([]byte, 10<<20))
		_ = tw.Close()
		_ = gz.Close()
	}()
	lyingZip := zipOf(t, map[string]string{"index.js": strings.Repeat("/", 500)}, nil)

	tests := []struct {
		name string
		body []byte
		want error
		msg  string
	}{
		{"empty", []byte("  \n"), ErrInvalidPackage, "the body is empty"},
		{"binary", []byte{0x00, 0x01, 0xff, 0xfe}, ErrInvalidPackage, "neither JavaScript source"},
		{"syntax error", []byte("exports.main = (;"), ErrInvalidPackage, "index.js does not compile"},
		{"corrupt zip", []byte("PK\x03\x04garbage"), ErrInvalidPackage, "not a readable zip archive"},
		{"corrupt gzip", []byte{0x1f, 0x8b, 0x00}, ErrInvalidPackage, "not a readable gzip stream"},
		{"zip with ..", zipOf(t, index, []zipEntry{{zip.FileHeader{Name: "../evil.js"}, "x"}}), ErrInvalidPackage, `".." is not allowed`},
		{"zip with nested ..", zipOf(t, index, []zipEntry{{zip.FileHeader{Name: "lib/../../evil.js"}, "x"}}), ErrInvalidPackage, `".." is not allowed`},
		{"zip with absolute path", zipOf(t, index, []zipEntry{{zip.FileHeader{Name: "/etc/cron.d/x"}, "x"}}), ErrInvalidPackage, "absolute paths are not allowed"},
		{"zip with backslash", zipOf(t, index, []zipEntry{{zip.FileHeader{Name: `..\evil.js`}, "x"}}), ErrInvalidPackage, "backslashes"},
		{"zip with drive letter", zipOf(t, index, []zipEntry{{zip.FileHeader{Name: "C:evil.js"}, "x"}}), ErrInvalidPackage, "drive letters"},
		{"zip with symlink", zipOf(t, index, []zipEntry{{symlink, "/etc/passwd"}}), ErrInvalidPackage, "symbolic link"},
		{"zip with a repeated name", zipOf(t, index, []zipEntry{{zip.FileHeader{Name: "index.js"}, "x"}}), ErrInvalidPackage, "appears twice"},
		{"tar with ..", tarGz(t, index, []tarEntry{{hdr: tar.Header{Name: "../../evil.js", Typeflag: tar.TypeReg, Mode: 0o644}, data: "x"}}), ErrInvalidPackage, `".." is not allowed`},
		{"tar with absolute path", tarGz(t, index, []tarEntry{{hdr: tar.Header{Name: "/tmp/evil.js", Typeflag: tar.TypeReg, Mode: 0o644}, data: "x"}}), ErrInvalidPackage, "absolute paths"},
		{"tar with symlink", tarGz(t, index, []tarEntry{{hdr: tar.Header{Name: "lib.js", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink, Mode: 0o777}}}), ErrInvalidPackage, "is a link"},
		{"tar with hard link", tarGz(t, index, []tarEntry{{hdr: tar.Header{Name: "lib.js", Linkname: "index.js", Typeflag: tar.TypeLink, Mode: 0o644}}}), ErrInvalidPackage, "is a link"},
		{"tar with device", tarGz(t, index, []tarEntry{{hdr: tar.Header{Name: "dev", Typeflag: tar.TypeChar, Mode: 0o644}}}), ErrInvalidPackage, "not a regular file"},
		{"tar with directory ..", tarGz(t, index, []tarEntry{{hdr: tar.Header{Name: "../", Typeflag: tar.TypeDir, Mode: 0o755}}}), ErrInvalidPackage, `".." is not allowed`},
		{"too many files", zipOf(t, many, nil), ErrTooLarge, "more than 3 files"},
		{"unpacks too large (tar)", tarGz(t, map[string]string{"index.js": strings.Repeat("/", 101)}, nil), ErrTooLarge, "unpacks to more than 100 bytes"},
		{"unpacks too large (zip)", lyingZip, ErrTooLarge, "unpacks to more than 100 bytes"},
		{"gzip bomb", bomb.Bytes(), ErrTooLarge, "unpacks to more than 100 bytes"},
		{"upload too large", []byte(strings.Repeat("/", 64<<10+1)), ErrTooLarge, "the upload is larger than 65536 bytes"},
		{"no entry", zipOf(t, map[string]string{"lib.js": "1", "other.js": "2"}, nil), ErrInvalidPackage, "no index.js"},
		{"main missing", zipOf(t, map[string]string{"package.json": `{"main":"start.js"}`, "index.js": "1"}, nil), ErrInvalidPackage, `main "start.js" is not in the package`},
		{"main outside", zipOf(t, map[string]string{"package.json": `{"main":"../x.js"}`, "index.js": "1"}, nil), ErrInvalidPackage, "must name a file inside the package"},
		{"bad package.json", zipOf(t, map[string]string{"package.json": `{`, "index.js": "1"}, nil), ErrInvalidPackage, "package.json"},
		{"bad JSON file", zipOf(t, map[string]string{"index.js": "1", "data.json": "{x"}, nil), ErrInvalidPackage, "data.json is not valid JSON"},
		{"empty archive", zipOf(t, nil, nil), ErrInvalidPackage, "holds no files"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := ParseUpload(tc.body, small)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error = %v; want %v containing %q", err, tc.want, tc.msg)
			}
		})
	}
}

// TestParseUploadDeepJSON: a manifest or JSON file nested 200,000 deep
// (well inside the upload limits) is refused as invalid, in time and
// memory linear in its size (encoding/json stops at 10,000 levels).
func TestParseUploadDeepJSON(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 200_000)
	for _, files := range []map[string]string{
		{"package.json": `{"main":` + deep, "index.js": "exports.main = () => 1;"},
		{"data.json": deep, "index.js": "exports.main = () => 1;"},
	} {
		_, _, err := ParseUpload(zipOf(t, files, nil), DefaultPackagesConfig())
		if !errors.Is(err, ErrInvalidPackage) {
			t.Errorf("a JSON file nested 200,000 deep: %v, want an invalid package", err)
		}
	}
}
