package errcode

import (
	"fmt"

	"github.com/labstack/echo/v4"
)

// Write answers c with the envelope for err (with Retry-After when the
// error says how long to wait).
func Write(c echo.Context, err error) error {
	status, body := Body(err)
	if secs, ok := As(err).Extensions["retryAfter"]; ok {
		c.Response().Header().Set("Retry-After", fmt.Sprint(secs))
	}
	return c.JSON(status, body)
}
