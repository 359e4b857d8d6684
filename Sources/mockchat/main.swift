print("mockchat")
