package mongo

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// The queries that run a caller's filter over the records (Find, the
// sub-queries of reference hops, an Aggregate the server cannot group)
// are sent as find commands that carry maxTimeMS, the time left before the operation's deadline
// (Config.OpTimeout, or the caller's if sooner): the database itself
// stops a query that runs past it, instead of working on after the
// client has given up. The driver's Collection.Find and Aggregate never
// send maxTimeMS for the cursors they return (DRIVERS-2722: a cursor
// kept open could outlive it); these cursors are read to the end within
// the same deadline. FerretDB honours maxTimeMS on find too. An Aggregate
// grouped on the server ($group) goes through the driver's Aggregate,
// bounded by the same deadline on the client's side only: FerretDB 1.24
// drops the connection when an aggregate command carries maxTimeMS.

// maxTimeMS is the time left before ctx's deadline, in milliseconds (at
// least 1); 0 when ctx has none.
func maxTimeMS(ctx context.Context) int64 {
	d, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	return max(1, time.Until(d).Milliseconds())
}

// findCommand is a find on the records collection.
type findCommand struct {
	filter, sort, projection bson.D
	skip, limit              int64
	batchSize                int32
}

// document is the command, with maxTimeMS from ctx.
func (f findCommand) document(ctx context.Context) bson.D {
	filter := f.filter
	if filter == nil {
		filter = bson.D{}
	}
	cmd := bson.D{{Key: "find", Value: collRecords}, {Key: "filter", Value: filter}}
	if len(f.sort) > 0 {
		cmd = append(cmd, bson.E{Key: "sort", Value: f.sort})
	}
	if len(f.projection) > 0 {
		cmd = append(cmd, bson.E{Key: "projection", Value: f.projection})
	}
	if f.skip > 0 {
		cmd = append(cmd, bson.E{Key: "skip", Value: f.skip})
	}
	if f.limit > 0 {
		cmd = append(cmd, bson.E{Key: "limit", Value: f.limit})
	}
	if f.batchSize > 0 {
		cmd = append(cmd, bson.E{Key: "batchSize", Value: f.batchSize})
	}
	if ms := maxTimeMS(ctx); ms > 0 {
		cmd = append(cmd, bson.E{Key: "maxTimeMS", Value: ms})
	}
	return cmd
}

// findRecords runs f and returns its cursor.
func (s *Store) findRecords(ctx context.Context, f findCommand) (*mongo.Cursor, error) {
	return s.db.RunCommandCursor(ctx, f.document(ctx))
}
