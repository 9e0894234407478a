package observe

import (
	"cmp"
	"context"
	"log/slog"
)

// A LogOption configures Log.
type LogOption interface{ apply(*logger) }

type logOptionFunc func(*logger)

func (f logOptionFunc) apply(l *logger) { f(l) }

// LogSubjects makes Log write each Event's subject as the "subject"
// attribute; subjects are personal data, so by default they are left out.
func LogSubjects() LogOption { return logOptionFunc(func(l *logger) { l.subjects = true }) }

// LogLevel sets the level of decision logs (default slog.LevelDebug).
func LogLevel(level slog.Level) LogOption {
	return logOptionFunc(func(l *logger) { l.level = level })
}

// Log returns an Observer that writes one record per Event to l
// (slog.Default() when nil) at LogLevel (default debug): "ratekit decision"
// with outcome, policy, quota, remaining, cost, latency, and fallback, held
// and error when set; "ratekit released" with outcome, policy and held for a
// Released event; "ratekit override" with outcome, policy, quota and error
// when set for an Overridden one; the subject only with LogSubjects. Records below the
// logger's level cost one Enabled call. It is safe for concurrent use.
func Log(l *slog.Logger, opts ...LogOption) Observer {
	lg := &logger{l: cmp.Or(l, slog.Default()), level: slog.LevelDebug}
	for _, o := range opts {
		if o != nil {
			o.apply(lg)
		}
	}
	return lg
}

type logger struct {
	l        *slog.Logger
	level    slog.Level
	subjects bool
}

func (lg *logger) Observe(ctx context.Context, e Event) {
	if !lg.l.Enabled(ctx, lg.level) {
		return
	}
	msg := "ratekit decision"
	attrs := make([]slog.Attr, 0, 10)
	attrs = append(attrs, slog.String("outcome", e.Outcome.String()), slog.String("policy", e.Policy))
	switch e.Outcome {
	case Released: // slots given back: no decision, so no quota, cost or latency
		msg = "ratekit released"
		attrs = append(attrs, slog.String("held", e.Held))
	case Overridden: // an operator's change: the quota in force, and whether the change failed
		msg = "ratekit override"
		attrs = append(attrs, slog.Int64("quota", e.Quota))
		if e.Err != nil {
			attrs = append(attrs, slog.String("error", e.Err.Error()))
		}
	default:
		attrs = append(attrs,
			slog.Int64("quota", e.Quota),
			slog.Int64("remaining", e.Remaining),
			slog.Int64("cost", e.Cost),
			slog.Duration("latency", e.Latency),
		)
		if e.Fallback {
			attrs = append(attrs, slog.Bool("fallback", true))
		}
		if e.Held != "" {
			attrs = append(attrs, slog.String("held", e.Held))
		}
		if e.Err != nil {
			attrs = append(attrs, slog.String("error", e.Err.Error()))
		}
	}
	if lg.subjects {
		attrs = append(attrs, slog.String("subject", e.Subject))
	}
	lg.l.LogAttrs(ctx, lg.level, msg, attrs...)
}
