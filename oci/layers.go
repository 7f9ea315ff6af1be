package oci

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/corehq/core/fn"
)

// functionDir is where a function image keeps its package: the
// directory /function of the image's file system.
const functionDir = "function"

// Whiteouts of the OCI image layer format: ".wh.<name>" hides <name> of
// the layers below; ".wh..wh..opq" hides everything the layers below hold
// in its directory.
const (
	whiteoutPrefix = ".wh."
	whiteoutOpaque = ".wh..wh..opq"
)

// errImageTooLarge: the layers unpack to more than Config.MaxImageBytes.
var errImageTooLarge = errors.New("oci: the image unpacks to more than the limit")

// layerError says why a function could not be read from an image, for
// the one who pushed it.
type layerError struct{ reason string }

func (e *layerError) Error() string { return e.reason }

func badLayer(format string, args ...any) error {
	return &layerError{reason: fmt.Sprintf(format, args...)}
}

// extractor reads the files under /function from an image's layers,
// applied bottom to top as a container runtime would: a later layer's
// file replaces an earlier one, whiteouts remove what the layers below
// hold, and everything outside /function is read past without being kept.
// Only regular files are allowed under /function (as in packages
// published through the admin API): links and devices are refused.
type extractor struct {
	cfg fn.PackagesConfig
	// left is how many more decompressed bytes may be read, all layers
	// counted (tar headers and skipped files included).
	left int64
	// files are the files kept so far by path ("function/…"), and size
	// their summed size.
	files map[string][]byte
	size  int
	// current marks the paths the layer being applied has written:
	// whiteouts in it hide the layers below, not its own files.
	current map[string]bool
}

func newExtractor(cfg fn.PackagesConfig, maxBytes int64) *extractor {
	return &extractor{cfg: cfg, left: maxBytes, files: map[string][]byte{}}
}

// apply applies one layer blob: a tar stream, gzip- or zstd-compressed or
// not (told apart by its first bytes, whatever the media type says).
func (x *extractor) apply(blob io.Reader) error {
	r, closeFn, err := decompress(blob)
	if err != nil {
		return err
	}
	defer closeFn()
	stream := &io.LimitedReader{R: r, N: x.left + 1}
	defer func() { x.left = max(stream.N-1, 0) }()
	tr := tar.NewReader(stream)
	x.current = map[string]bool{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if stream.N <= 0 {
				return errImageTooLarge
			}
			return badLayer("a layer is not a readable tar stream: %v", err)
		}
		if err := x.entry(hdr, tr); err != nil {
			if stream.N <= 0 {
				return errImageTooLarge
			}
			return err
		}
	}
}

// entry applies one tar entry.
func (x *extractor) entry(hdr *tar.Header, data io.Reader) error {
	name := cleanEntry(hdr.Name)
	if name == "" {
		return nil
	}
	dir, base := path.Split(name)
	switch {
	case base == whiteoutOpaque:
		x.hide(dir) // dir ends in '/', or is "" for the root
		return nil
	case strings.HasPrefix(base, whiteoutPrefix):
		target := dir + strings.TrimPrefix(base, whiteoutPrefix)
		x.remove(target)
		x.hide(target + "/")
		return nil
	}
	inside := strings.HasPrefix(name, functionDir+"/")
	if name == functionDir && hdr.Typeflag != tar.TypeDir {
		// /function replaced by a file or a link: the package below is gone.
		x.hide(functionDir + "/")
		if hdr.Typeflag == tar.TypeSymlink || hdr.Typeflag == tar.TypeLink {
			return badLayer("/%s is a link; put the function's files in the directory /%s itself", functionDir, functionDir)
		}
		return nil
	}
	if !inside {
		return nil
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		x.remove(name) // a directory replaces a file of the layers below
		return nil
	case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // TypeRegA still occurs in old layers
	case tar.TypeSymlink, tar.TypeLink:
		return badLayer("/%s is a link; a function image holds regular files under /%s only", name, functionDir)
	default:
		return badLayer("/%s is not a regular file (tar type %q)", name, hdr.Typeflag)
	}
	x.remove(name)
	x.hide(name + "/") // a file replaces a directory of the layers below
	if len(x.files) >= x.cfg.MaxFiles {
		return badLayer("/%s holds more than %d files", functionDir, x.cfg.MaxFiles)
	}
	room := x.cfg.MaxUnpackedBytes - x.size
	b, err := io.ReadAll(io.LimitReader(data, int64(room)+1))
	if err != nil {
		return badLayer("reading /%s: %v", name, err)
	}
	if len(b) > room {
		return badLayer("the files under /%s are larger than %d bytes (at /%s)", functionDir, x.cfg.MaxUnpackedBytes, name)
	}
	x.files[name] = b
	x.size += len(b)
	x.current[name] = true
	return nil
}

// remove drops a kept file of the layers below.
func (x *extractor) remove(name string) {
	if b, ok := x.files[name]; ok && !x.current[name] {
		x.size -= len(b)
		delete(x.files, name)
	}
}

// hide drops the kept files of the layers below under prefix (a
// directory with its trailing '/', or "" for everything).
func (x *extractor) hide(prefix string) {
	for name := range x.files {
		if strings.HasPrefix(name, prefix) {
			x.remove(name)
		}
	}
}

// function returns the kept files by their path inside /function.
func (x *extractor) function() map[string][]byte {
	out := make(map[string][]byte, len(x.files))
	for name, b := range x.files {
		out[strings.TrimPrefix(name, functionDir+"/")] = b
	}
	return out
}

// cleanEntry makes a tar entry name relative to the image's root ("./a/b"
// and "/a/b" are "a/b"); "" for the root itself.
func cleanEntry(name string) string {
	c := path.Clean("/" + name)
	return strings.TrimPrefix(c, "/")
}

// decompress returns the tar stream of a layer blob.
func decompress(blob io.Reader) (io.Reader, func(), error) {
	br := bufio.NewReader(blob)
	magic, _ := br.Peek(4) // a short blob is read as tar, which reports it
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, badLayer("a layer is not a readable gzip stream: %v", err)
		}
		return gz, func() { _ = gz.Close() }, nil
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(256<<20))
		if err != nil {
			return nil, nil, badLayer("a layer is not a readable zstd stream: %v", err)
		}
		return zr, zr.Close, nil
	default:
		return br, func() {}, nil
	}
}
