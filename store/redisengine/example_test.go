package redisengine_test

import (
	"fmt"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/redisengine"
)

// The keys of a call: a state key per limit, then the block keys, all with
// the subject's hash tag.
func ExampleEngine_Keys() {
	e, err := redisengine.New(redisengine.Options{Prefix: "app"})
	if err != nil {
		panic(err)
	}
	keys, err := e.Keys("203.0.113.7", []ratekit.Limit{
		ratekit.FixedWindow(100, time.Minute).Named("api"),
		ratekit.GCRA(10, time.Second, 5).Named("burst").Block(time.Minute),
	})
	if err != nil {
		panic(err)
	}
	for _, k := range keys {
		fmt.Println(k)
	}
	// Output:
	// app:{203.0.113.7}:api:fixed
	// app:{203.0.113.7}:burst:gcra
	// app:{203.0.113.7}:burst:gcra:block
}

// Tag keeps a short, safe subject as it is and hashes any other.
func ExampleTag() {
	for _, s := range []string{"alice", "a subject with spaces"} {
		t, _ := redisengine.Tag(s)
		fmt.Println(t)
	}
	// Output:
	// alice
	// #O6QZ8QQxBMgfo-NBhBvMn9
}
