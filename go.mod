module github.com/clrprof/clrprof

go 1.26

require (
	github.com/dave/jennifer v1.7.1
	github.com/google/uuid v1.6.0
)
