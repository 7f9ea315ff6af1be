// Package media says what an uploaded file's content is, from the
// content alone (a client's filename or Content-Type is never trusted):
// its media type, sniffed by the WHATWG algorithm (net/http's
// DetectContentType, from the first 512 bytes); the extension of the
// name it is served under; whether a browser may show it inline; and,
// for the image types (PNG, JPEG, GIF, WebP), its width and height, read
// from its header only (DecodeConfig), and its thumbnails (thumb.go),
// decoded only after the header's size is checked against a pixel bound,
// so a decompression bomb is refused before anything is allocated.
package media
