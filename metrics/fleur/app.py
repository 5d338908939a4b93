from capeval.integrations.gradio_app import metric_space
demo = metric_space(__file__, launch=__name__ == "__main__")
