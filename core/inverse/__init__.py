"""Questions asked the other way round, and what a run costs.

solve          `run(request)`: any request (plain, inverse, time & cost); `solve` for `solve_for`
judge          the target cards and whether one value fits them
solve_counts   the largest count that fits (context, users, batch, sequence, offloaded layers)
solve_steps    the best precision or largest model that fits
solved         the `Solved` answer
cost           how long and how much: a training run, a day of serving, a thousand images
cost_generation  the images' and clips' cost, from published figures only
cost_options   the configurations priced, and one priced option
comparison     cards side by side for one workload
purchase       rent or buy
"""
