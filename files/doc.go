// Package files is the door of uploaded files: POST /upload/{directory…}
// (and the same under /rest/v1/upload/) keeps the parts of a
// multipart/form-data body as File records, and GET
// /file/{instanceId}-{fileId}.{extension} serves a file's content.
//
// It reads and writes HTTP only: the engine keeps and reads the files
// (gql.Engine.Upload, gql.Engine.OpenFile), under the rules of every
// record.
//
// Rules:
//   - An upload names its instance in core-domain and needs a token
//     (the instance token or a session): its files are the caller's.
//     Every part with a filename is a file; the answer (201) is the
//     created records as a JSON array. Parts are streamed to the store:
//     the server's memory does not grow with a file. A part past the
//     instance's maxFileSize answers 413 TOO_LARGE, past its
//     storageBytes quota 403 QUOTA_EXCEEDED; either way nothing of the
//     request is kept. The body is exempt from the server's body limit
//     (the instance's bounds apply instead) and from its request
//     time-out (the connection's read time-out still applies).
//   - A download names its instance in its path; the caller's token
//     comes in the authorization header or, for an <img src> or a link,
//     in ?token=. A file that is missing, trashed or that the caller
//     may not read answers the same 404 NOT_FOUND. The content is served
//     with its sniffed media type, Content-Length, an ETag (its
//     SHA-256: If-None-Match answers 304), Range (206), Content-Disposition
//     inline for images, PDF, plain text, audio and video and attachment
//     for anything else, and the sandbox of tenant content
//     (untrusted.Sandbox: Content-Security-Policy sandbox, no script;
//     nosniff), so an uploaded HTML or SVG page cannot act in the
//     service's origin.
//   - ?thumb={size} serves a thumbnail of an image, of a size of
//     media.Thumbs only, made once and kept (gql.Engine.OpenFile).
package files
