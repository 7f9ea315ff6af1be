package errcode

import "github.com/labstack/echo/v4"

// Write answers c with the envelope for err.
func Write(c echo.Context, err error) error {
	status, body := Body(err)
	return c.JSON(status, body)
}
