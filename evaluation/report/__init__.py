"""Reports of evaluation runs and builds: summary tables (DataFrame, CSV, markdown) and one self-contained HTML file.

- :func:`s2sbench.evaluation.results.summary.results_markdown`: the summary as markdown (Prefect artifact, Hub card)
- :func:`s2sbench.evaluation.results.summary.summary_frame`: the summary as a pandas DataFrame (``write_csv``)
- :func:`s2sbench.evaluation.report.html.write_report`: the HTML report of results and, optionally, a build
- :mod:`s2sbench.evaluation.report.browser`: open a report in headless Chromium (its DOM, a screenshot)
"""
