include loop.profile
