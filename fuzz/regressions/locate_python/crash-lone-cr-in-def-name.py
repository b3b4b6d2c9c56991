def abcd(x):
    pass
