module github.com/fenceproof/fenceproof

go 1.25.0
