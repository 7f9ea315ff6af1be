package media

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/image/draw"
)

// MaxPixels bounds the images a thumbnail is made of: 40 megapixels (a
// 160 MiB RGBA image while it is scaled). An image whose header declares
// more is refused before its pixels are decoded.
const MaxPixels = 40_000_000

// ErrTooManyPixels: an image declares more than MaxPixels.
var ErrTooManyPixels = errors.New("media: the image declares more pixels than a thumbnail is made of")

// Thumbs are the thumbnail sizes a client may ask for, so that no client
// makes the server render (and keep) unbounded variants: WxH crops to
// fill the box from the centre; WxHf fits the image inside it.
var Thumbs = []string{"100x100", "100x100f", "300x300", "300x300f", "800x800f"}

// Thumb is a thumbnail size of Thumbs.
type Thumb struct {
	W, H int
	Fit  bool
}

// ParseThumb reads a size of Thumbs.
func ParseThumb(s string) (Thumb, error) {
	if !slices.Contains(Thumbs, s) {
		return Thumb{}, fmt.Errorf("thumb=%q: the sizes are %s", s, strings.Join(Thumbs, ", "))
	}
	fit := strings.HasSuffix(s, "f")
	w, h, _ := strings.Cut(strings.TrimSuffix(s, "f"), "x")
	wi, _ := strconv.Atoi(w)
	hi, _ := strconv.Atoi(h)
	return Thumb{W: wi, H: hi, Fit: fit}, nil
}

// Make decodes the image r holds (of media type typ), after checking its
// declared size against MaxPixels, and returns its thumbnail: PNG for
// PNG, GIF and WebP (the first frame), JPEG for JPEG.
func (t Thumb) Make(r io.ReadSeeker, typ string) (data []byte, outType string, err error) {
	cfg, _, err := image.DecodeConfig(r)
	if err != nil {
		return nil, "", fmt.Errorf("media: reading the image's header: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, "", fmt.Errorf("%w (%d×%d)", ErrTooManyPixels, cfg.Width, cfg.Height)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, "", err
	}
	src, _, err := image.Decode(r)
	if err != nil {
		return nil, "", fmt.Errorf("media: decoding the image: %w", err)
	}
	dst := image.NewRGBA(image.Rect(0, 0, t.W, t.H))
	sr := src.Bounds()
	if t.Fit {
		w, h := fitIn(sr.Dx(), sr.Dy(), t.W, t.H)
		dst = image.NewRGBA(image.Rect(0, 0, w, h))
	} else {
		sr = cropTo(sr, t.W, t.H)
	}
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, sr, draw.Src, nil)
	var b bytes.Buffer
	if Essence(typ) == "image/jpeg" {
		err, outType = jpeg.Encode(&b, dst, &jpeg.Options{Quality: 85}), "image/jpeg"
	} else {
		err, outType = png.Encode(&b, dst), "image/png"
	}
	return b.Bytes(), outType, err
}

// fitIn scales w×h to fit inside bw×bh, keeping its proportions (never
// larger than it is).
func fitIn(w, h, bw, bh int) (int, int) {
	if w <= bw && h <= bh {
		return w, h
	}
	if w*bh > h*bw { // wider than the box
		return bw, max(1, h*bw/w)
	}
	return max(1, w*bh/h), bh
}

// cropTo is the centred part of r with the proportions of w×h.
func cropTo(r image.Rectangle, w, h int) image.Rectangle {
	rw, rh := r.Dx(), r.Dy()
	if rw*h > rh*w { // too wide: cut the sides
		cw := max(1, rh*w/h)
		x := r.Min.X + (rw-cw)/2
		return image.Rect(x, r.Min.Y, x+cw, r.Max.Y)
	}
	ch := max(1, rw*h/w)
	y := r.Min.Y + (rh-ch)/2
	return image.Rect(r.Min.X, y, r.Max.X, y+ch)
}
