def write(ctx, results, figs, failed):
    pass
