package media

import (
	"image"
	_ "image/gif" // registers GIF with image.DecodeConfig
	_ "image/jpeg"
	_ "image/png"
	"io"
	"mime"
	"net/http"
	"strings"

	_ "golang.org/x/image/webp" // registers WebP
)

// SniffLen is how many leading bytes Sniff reads.
const SniffLen = 512

// Sniff returns the media type of a content from its first bytes (at
// most SniffLen are read): application/octet-stream when nothing is
// recognised.
func Sniff(head []byte) string {
	return http.DetectContentType(head)
}

// extensions are the extensions of the media types Sniff gives, by their
// essence (the type without parameters).
var extensions = map[string]string{
	"image/png":                     "png",
	"image/jpeg":                    "jpg",
	"image/gif":                     "gif",
	"image/webp":                    "webp",
	"image/bmp":                     "bmp",
	"image/x-icon":                  "ico",
	"application/pdf":               "pdf",
	"application/zip":               "zip",
	"application/x-gzip":            "gz",
	"application/wasm":              "wasm",
	"application/postscript":        "ps",
	"application/vnd.ms-fontobject": "eot",
	"application/ogg":               "ogg",
	"audio/mpeg":                    "mp3",
	"audio/wave":                    "wav",
	"audio/aiff":                    "aiff",
	"audio/basic":                   "au",
	"audio/midi":                    "mid",
	"video/mp4":                     "mp4",
	"video/webm":                    "webm",
	"video/avi":                     "avi",
	"font/ttf":                      "ttf",
	"font/otf":                      "otf",
	"font/woff":                     "woff",
	"font/woff2":                    "woff2",
	"text/plain":                    "txt",
	"text/html":                     "html",
	"text/xml":                      "xml",
	"application/json":              "json",
}

// Essence returns a media type without its parameters, in lower case.
func Essence(typ string) string {
	if t, _, err := mime.ParseMediaType(typ); err == nil {
		return t
	}
	e, _, _ := strings.Cut(typ, ";")
	return strings.ToLower(strings.TrimSpace(e))
}

// Extension returns the extension a content of media type typ is served
// under: "bin" for types it does not know.
func Extension(typ string) string {
	if ext, ok := extensions[Essence(typ)]; ok {
		return ext
	}
	return "bin"
}

// inline are the types a browser may show in the page's place: images
// that run nothing, PDF, plain text, audio and video. Anything else (HTML,
// XML, SVG, …) is served as an attachment.
var inline = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/bmp": true, "image/x-icon": true,
	"application/pdf": true, "text/plain": true,
	"audio/mpeg": true, "audio/wave": true, "video/mp4": true, "video/webm": true, "application/ogg": true,
}

// Inline reports whether a content of media type typ may be shown
// inline (Content-Disposition: inline) rather than downloaded.
func Inline(typ string) bool { return inline[Essence(typ)] }

// IsImage reports whether typ is an image type whose size is read and
// thumbnails made: PNG, JPEG, GIF and WebP.
func IsImage(typ string) bool {
	switch Essence(typ) {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// Dimensions returns an image's width and height from its header, without
// decoding its pixels.
func Dimensions(r io.Reader) (width, height int, err error) {
	cfg, _, err := image.DecodeConfig(r)
	if err != nil {
		return 0, 0, err
	}
	return cfg.Width, cfg.Height, nil
}
