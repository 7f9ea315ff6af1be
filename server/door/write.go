package door

import (
	"fmt"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
)

// WriteError answers c with the envelope for err (with Retry-After when
// the error says how long to wait).
func WriteError(c echo.Context, err error) error {
	status, body := errcode.Body(err)
	if secs, ok := errcode.As(err).Extensions["retryAfter"]; ok {
		c.Response().Header().Set("Retry-After", fmt.Sprint(secs))
	}
	return c.JSON(status, body)
}

// WriteResult answers a Result as c.JSON would (pretty-printed on
// ?pretty), writing the encoded data as it is.
func WriteResult(c echo.Context, res *gql.Result) error {
	if c.Echo().Debug || c.Request().URL.RawQuery != "" {
		if _, pretty := c.QueryParams()["pretty"]; pretty || c.Echo().Debug {
			return c.JSON(res.Status, res)
		}
	}
	body, err := res.Body()
	if err != nil {
		return err
	}
	return WriteJSON(c, res.Status, body)
}

// WriteJSON answers an encoded JSON body with its length: net/http then
// sends it whole rather than in chunks (a chunked answer larger than the
// connection's buffer costs a write for each chunk and one to end them).
func WriteJSON(c echo.Context, status int, body []byte) error {
	c.Response().Header().Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	return c.JSONBlob(status, body)
}
